public import Ledger
import PostgresLedger
import SQLiteLedger

extension DatabaseLocation {
    /// Opens the ledger at this location, its schema migrated: SQLite on the caller's thread (the hot writes
    /// made on a loop committed together once per turn), PostgreSQL
    /// through `pool.size` connections for transactions and `pool.pipelines` for single statements, on threads of their own.
    /// `observer` is told each call's duration (the ledger latency metric).
    public func openLedger(pool: ServiceConfiguration.DatabasePool, observer: (any LedgerCallObserver)? = nil) throws(StorageError) -> any Ledger {
        switch self {
        case .sqlite(let path):
            return try SQLiteLedger(path: path, observer: observer)
        case .postgres(let uri):
            return try PostgresLedger(uri: uri, poolSize: pool.size, pipelineConnections: pool.pipelines, poolWait: .milliseconds(pool.waitMilliseconds), observer: observer)
        }
    }
}
