import CPostgres

/// Placeholder: the PostgreSQL ledger is being built (issue 9).
enum PostgresLedgerPlaceholder {
    static func libpqVersion() -> Int32 { PQlibVersion() }
}
