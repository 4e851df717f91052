public import Ledger
import PostgresLedger
import SQLiteLedger

extension DatabaseLocation {
    /// Opens the ledger at this location, its schema migrated: SQLite inline on the caller's thread, PostgreSQL
    /// through a pool of `pool.size` connections on threads of their own.
    public func openLedger(pool: ServiceConfiguration.DatabasePool) throws(StorageError) -> any Ledger {
        switch self {
        case .sqlite(let path):
            return try SQLiteLedger(path: path)
        case .postgres(let uri):
            return try PostgresLedger(uri: uri, poolSize: pool.size, poolWait: .milliseconds(pool.waitMilliseconds))
        }
    }
}
