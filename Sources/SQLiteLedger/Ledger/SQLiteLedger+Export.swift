public import Ledger

extension SQLiteLedger {
    /// Every table of the ledger (`LedgerTables.tableNames`), rows in insertion order, for `twobits ledger copy`.
    /// Exact or refused: a REAL (which no ledger column holds, and which has no exact place in an integer) and a
    /// text that is not UTF-8 are refused naming table, column and rowid. Texts are read as their bytes, so a
    /// NUL inside one is kept for the target to refuse rather than cut there.
    public func exportTables() throws(StorageError) -> LedgerTables {
        func query(_ sql: String) throws(StorageError) -> [SQLiteRow] {
            do { return try db.query(sql) } catch { throw StorageError(error) }
        }
        var tables: [LedgerTables.Table] = []
        for name in LedgerTables.tableNames {
            let columns = try query("PRAGMA table_info(\(name))").compactMap { $0.string("name") }
            let selected = columns.enumerated().map { index, column in
                "typeof(\"\(column)\") AS \"t\(index)\", CASE typeof(\"\(column)\") WHEN 'text' THEN CAST(\"\(column)\" AS BLOB) ELSE \"\(column)\" END AS \"v\(index)\""
            }
            let sql = "SELECT " + (["rowid AS \"rowid_\""] + selected).joined(separator: ", ") + " FROM \(name) ORDER BY rowid"
            var rows: [[LedgerTables.Cell]] = []
            var rowIDs: [Int64] = []
            for row in try query(sql) {
                let rowID = Int64(row.int("rowid_") ?? 0)
                var cells: [LedgerTables.Cell] = []
                for (index, column) in columns.enumerated() {
                    let problem = { (what: String) in StorageError("table \(name), column \(column), rowid \(rowID): \(what); nothing was copied") }
                    switch (row.string("t\(index)"), row.values["v\(index)"]) {
                    case ("integer", .integer(let i)?): cells.append(.integer(i))
                    case ("text", .blob(let bytes)?):
                        guard let text = String(validating: bytes, as: UTF8.self) else { throw problem("a text that is not valid UTF-8") }
                        cells.append(.text(text))
                    case ("blob", .blob(let bytes)?): cells.append(.blob(bytes))
                    case ("null", _): cells.append(.null)
                    case ("real", .real(let d)?):
                        throw problem("a floating-point value (REAL \(d)), which no ledger column holds and no integer holds exactly")
                    default: throw problem("a value of SQLite type \(row.string("t\(index)") ?? "?")")
                    }
                }
                rows.append(cells)
                rowIDs.append(rowID)
            }
            tables.append(LedgerTables.Table(name: name, columns: columns, rows: rows, rowIDs: rowIDs))
        }
        return LedgerTables(tables: tables)
    }
}
