public import Ledger

extension SQLiteLedger {
    /// Every table of the ledger (`LedgerTables.tableNames`), rows in insertion order, for `twobits ledger copy`.
    public func exportTables() throws(StorageError) -> LedgerTables {
        do throws(SQLiteError) {
            var tables: [LedgerTables.Table] = []
            for name in LedgerTables.tableNames {
                let columns = try db.query("PRAGMA table_info(\(name))").compactMap { $0.string("name") }
                let rows = try db.query("SELECT * FROM \(name) ORDER BY rowid").map { row in
                    columns.map { column -> LedgerTables.Cell in
                        switch row.values[column] {
                        case .integer(let i): .integer(i)
                        case .real(let d): .integer(Int64(d))
                        case .text(let s): .text(s)
                        case .blob(let b): .blob(b)
                        case .null, nil: .null
                        }
                    }
                }
                tables.append(LedgerTables.Table(name: name, columns: columns, rows: rows))
            }
            return LedgerTables(tables: tables)
        } catch { throw StorageError(error) }
    }
}
