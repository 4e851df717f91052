/// Statements run inside `SQLiteConnection.transaction`.
public struct SQLiteTransaction {
    let connection: SQLiteConnection

    @discardableResult
    public func query(_ sql: String, _ values: [SQLiteValue] = []) throws(SQLiteError) -> [SQLiteRow] {
        try connection.run(sql, values)
    }

    /// Rows changed by the last statement.
    public var changes: Int { connection.changes }

    /// The rowid of the last row inserted on this connection.
    public var lastInsertRowID: Int64 { connection.lastInsertRowID }
}
