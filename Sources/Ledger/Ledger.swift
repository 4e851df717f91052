/// Everything TwoBits remembers besides Apple's bits, as one type for the composition root: SQLite by
/// default, PostgreSQL for running several instances. Each consumer takes only the stores it uses
/// (`Stores/`), so that a test double of one store needs that store's methods only.
///
/// Every call is `async` so that an implementation may wait on a network round trip without holding a
/// thread; records are plain Swift values. `SQLiteLedger` runs on the caller's thread (a write costs
/// tens of microseconds), its hot writes committed together once per event-loop turn.
public protocol Ledger: LedgerHealth, AuditLog, WriteIntentStore, IdempotencyStore, PendingOrderStore, ReplayGuard,
    DebugSecretStore, KeyActivationStore, AppAttestChallengeStore, AppAttestKeyStore, AppAttestReceiptStore, StatisticsStore, ReplicaPresence {
    /// Releases connections and threads at shutdown; later calls fail.
    func close()
}

extension Ledger {
    /// Nothing to release by default (SQLite's connection closes when the ledger goes).
    public func close() {}
}
