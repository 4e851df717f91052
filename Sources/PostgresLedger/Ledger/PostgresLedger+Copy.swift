public import Ledger

extension PostgresLedger {
    /// Writes `tables` (from `SQLiteLedger.exportTables`) into this database in one transaction and returns
    /// them as read back from it. Refuses a database holding any ledger row unless `replacingExisting` (which
    /// empties those tables first). Exact or nothing: a value the target column cannot hold as it is (a text with
    /// a NUL, a blob into a text column, an integer outside an INTEGER column's range) is refused before any row
    /// is written, naming table, column and row; after the inserts every table is read back and compared, value
    /// for value (`canonicalForm`), with the source, and any difference rolls the whole copy back. Audit ids are
    /// kept, and the id sequence moves past them.
    public func importTables(_ tables: LedgerTables, replacingExisting: Bool) throws(StorageError) -> LedgerTables {
        let db = try directConnection()
        do throws(PostgresError) {
            return try db.transaction { db throws(PostgresError) -> LedgerTables in
                let existing = try Self.counts(db)
                let occupied = existing.filter { $0.value > 0 }.keys.sorted()
                if !occupied.isEmpty {
                    guard replacingExisting else {
                        throw PostgresError(sqlState: nil, message: "the target ledger is not empty (\(occupied.joined(separator: ", "))); pass --replace to overwrite it")
                    }
                }
                let copied = tables.tables.filter { LedgerTables.tableNames.contains($0.name) }
                for table in copied { try Self.refuseInexact(table, columns: Self.columnTypes(of: table.name, db)) }
                if !occupied.isEmpty { try db.execute("TRUNCATE \(LedgerTables.tableNames.joined(separator: ", ")) RESTART IDENTITY") }
                for table in copied { try Self.insert(table, into: db) }
                var readBack: [LedgerTables.Table] = []
                for table in copied {
                    let target = try Self.read(table.name, columns: table.columns, db)
                    guard target.canonicalForm == table.canonicalForm else {
                        let missing = table.rowsMissing(from: target)
                        throw PostgresError(sqlState: nil, message: "table \(table.name): the values read back from the target differ from the source's "
                                            + "(\(missing) of \(table.rows.count) rows not found as they were); nothing was copied")
                    }
                    readBack.append(target)
                }
                try db.execute("""
                    SELECT setval(pg_get_serial_sequence('audit_events', 'id'), coalesce(max(id), 0) + 1, false) FROM audit_events
                    """)
                return LedgerTables(tables: readBack)
            }
        } catch { throw StorageError("PostgreSQL: \(error)") }
    }

    /// A target column: its type as `format_type` names it, and whether it takes NULL.
    private struct Column {
        var type: String
        var notNull: Bool
    }

    private static func columnTypes(of table: String, _ db: PostgresConnection) throws(PostgresError) -> [String: Column] {
        let rows = try db.query("""
            SELECT attname, format_type(atttypid, atttypmod) AS type, attnotnull::text AS not_null FROM pg_attribute
            WHERE attrelid = to_regclass($1) AND attnum > 0 AND NOT attisdropped
            """, [.text(table)])
        var columns: [String: Column] = [:]
        for row in rows { columns[row.string("attname") ?? ""] = Column(type: row.string("type") ?? "", notNull: row.string("not_null") == "true") }
        return columns
    }

    /// Throws, naming table, column and row, at the first value the target would change or refuse mid-copy:
    /// PostgreSQL would turn a blob bound to a text column into `\\x…` text and an integer into its digits.
    private static func refuseInexact(_ table: LedgerTables.Table, columns: [String: Column]) throws(PostgresError) {
        for column in table.columns where columns[column] == nil {
            throw PostgresError(sqlState: nil, message: "table \(table.name): the target has no column \(column); nothing was copied")
        }
        for (index, row) in table.rows.enumerated() {
            for (name, cell) in zip(table.columns, row) {
                let target = columns[name]!
                let problem: String?
                switch cell {
                case .null: problem = target.notNull ? "NULL, which the target's column does not take" : nil
                case .integer(let i):
                    switch target.type {
                    case "bigint": problem = nil
                    case "integer": problem = Int32(exactly: i) == nil ? "the integer \(i), outside the target's INTEGER range" : nil
                    case "smallint": problem = Int16(exactly: i) == nil ? "the integer \(i), outside the target's SMALLINT range" : nil
                    default: problem = "an integer, which the target's \(target.type) column would not keep as one"
                    }
                case .text(let s):
                    if target.type != "text" { problem = "a text, which the target's \(target.type) column would not keep as one" }
                    else if s.utf8.contains(0) { problem = "a text holding a NUL byte, which PostgreSQL's text cannot hold" }
                    else { problem = nil }
                case .blob:
                    problem = target.type == "bytea" ? nil : "a blob, which the target's \(target.type) column would not keep as one"
                }
                if let problem {
                    throw PostgresError(sqlState: nil, message: "table \(table.name), column \(name), \(table.rowName(index)): \(problem); nothing was copied")
                }
            }
        }
    }

    /// `columns` of every row of `table`, typed as `LedgerTables.Cell`.
    private static func read(_ table: String, columns: [String], _ db: PostgresConnection) throws(PostgresError) -> LedgerTables.Table {
        guard !columns.isEmpty else { return LedgerTables.Table(name: table, columns: columns, rows: []) }
        let rows = try db.query("SELECT \(columns.map { "\"\($0)\"" }.joined(separator: ", ")) FROM \(table)").map { row in
            row.values.map { value -> LedgerTables.Cell in
                switch value {
                case .null: .null
                case .integer(let i): .integer(i)
                case .text(let s): .text(s)
                case .bytea(let b): .blob(b)
                }
            }
        }
        return LedgerTables.Table(name: table, columns: columns, rows: rows)
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
