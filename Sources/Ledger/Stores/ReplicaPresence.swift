/// How many processes serve from this ledger now (the rate limits are deployment totals, each replica takes its
/// share: docs/operations.md, "Rate limits").
public protocol ReplicaPresence: Sendable {
    /// How many processes serve from this ledger now, this one included (at least 1). One for a ledger only one
    /// process opens.
    func liveReplicas() async throws(StorageError) -> Int
}

extension ReplicaPresence {
    /// One process: SQLite's ledger is opened by one process only.
    public func liveReplicas() async throws(StorageError) -> Int { 1 }
}
