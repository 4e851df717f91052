public import Ledger

extension PostgresLedger {
    /// Writes `tables` (from `SQLiteLedger.exportTables`) into this database in one transaction; returns
    /// the rows now in each table. Refuses a database holding any ledger row unless `replacingExisting`
    /// (which empties those tables first). Audit ids are kept, and the id sequence moves past them.
    public func importTables(_ tables: LedgerTables, replacingExisting: Bool) throws(StorageError) -> [String: Int] {
        let db = try directConnection()
        do throws(PostgresError) {
            return try db.transaction { db throws(PostgresError) -> [String: Int] in
                let existing = try Self.counts(db)
                let occupied = existing.filter { $0.value > 0 }.keys.sorted()
                if !occupied.isEmpty {
                    guard replacingExisting else {
                        throw PostgresError(sqlState: nil, message: "the target ledger is not empty (\(occupied.joined(separator: ", "))); pass --replace to overwrite it")
                    }
                    try db.execute("TRUNCATE \(LedgerTables.tableNames.joined(separator: ", ")) RESTART IDENTITY")
                }
                for table in tables.tables where LedgerTables.tableNames.contains(table.name) {
                    try Self.insert(table, into: db)
                }
                try db.execute("""
                    SELECT setval(pg_get_serial_sequence('audit_events', 'id'), coalesce(max(id), 0) + 1, false) FROM audit_events
                    """)
                return try Self.counts(db)
            }
        } catch { throw StorageError("PostgreSQL: \(error)") }
    }

    /// Rows per ledger table (`LedgerTables.tableNames`).
    public func tableCounts() throws(StorageError) -> [String: Int] {
        let db = try directConnection()
        do { return try Self.counts(db) } catch { throw StorageError("PostgreSQL: \(error)") }
    }

    private static func counts(_ db: PostgresConnection) throws(PostgresError) -> [String: Int] {
        let sql = LedgerTables.tableNames.map { "SELECT '\($0)' AS name, count(*) AS n FROM \($0)" }.joined(separator: " UNION ALL ")
        var counts: [String: Int] = [:]
        for row in try db.query(sql) { counts[row.string("name") ?? ""] = row.int("n") ?? 0 }
        return counts
    }

    /// Multi-row inserts, a few hundred rows per statement.
    private static func insert(_ table: LedgerTables.Table, into db: PostgresConnection) throws(PostgresError) {
        guard !table.columns.isEmpty, !table.rows.isEmpty else { return }
        let columns = table.columns.map { "\"\($0)\"" }.joined(separator: ", ")
        let perStatement = max(1, 2_000 / table.columns.count)
        var start = 0
        while start < table.rows.count {
            let batch = table.rows[start..<min(start + perStatement, table.rows.count)]
            var parameters: [PostgresValue] = []
            var tuples: [String] = []
            for row in batch {
                var placeholders: [String] = []
                for cell in row {
                    parameters.append(value(cell))
                    placeholders.append("$\(parameters.count)")
                }
                tuples.append("(" + placeholders.joined(separator: ", ") + ")")
            }
            try db.query("INSERT INTO \(table.name) (\(columns)) VALUES \(tuples.joined(separator: ", "))", parameters)
            start += batch.count
        }
    }

    private static func value(_ cell: LedgerTables.Cell) -> PostgresValue {
        switch cell {
        case .null: .null
        case .integer(let i): .integer(i)
        case .text(let s): .text(s)
        case .blob(let b): .bytea(b)
        }
    }
}
