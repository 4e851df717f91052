/// Whether the ledger takes writes (the readiness check).
public protocol LedgerHealth: Sendable {
    /// Fails when the store cannot take a write (readiness). Implementations may cache the verdict for a
    /// few seconds; a database file that is no longer the file at its path fails at once.
    func checkHealth() async throws(StorageError)
}
