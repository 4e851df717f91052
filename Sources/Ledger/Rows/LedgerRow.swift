public import FoundationEssentials

/// One result row as both ledgers read it, by column name, so that each record is mapped from a row once
/// for SQLite and PostgreSQL (`AuditEvent(row:)` and the others). A column the row does not have throws: the
/// query and its mapping disagree, which a default value would hide. NULL, or a value of another type, is nil.
public protocol LedgerRow {
    func text(_ column: String) throws(StorageError) -> String?
    func integer(_ column: String) throws(StorageError) -> Int64?
    func data(_ column: String) throws(StorageError) -> Data?
}

extension LedgerRow {
    /// Milliseconds since 1970, as the ledgers store time; nil for NULL.
    public func time(_ column: String) throws(StorageError) -> Date? {
        try integer(column).map { Date(timeIntervalSince1970: Double($0) / 1000) }
    }

    /// A text column holding one of the domain's values, parsed once here, at the edge of storage: NULL or a
    /// text `parse` refuses is a `StorageError` naming the column and what it should hold (`what`).
    public func parsed<Value>(_ column: String, as what: String, _ parse: (String) -> Value?) throws(StorageError) -> Value {
        let stored = try text(column)
        guard let stored, let value = parse(stored) else {
            throw StorageError("the ledger's \(column) holds \(stored.map { "\"\($0)\"" } ?? "NULL"), not \(what)")
        }
        return value
    }

    /// The error for a column the row does not have.
    public static func missing(_ column: String) -> StorageError { StorageError("no column \(column) in the ledger's row") }
}

extension Sequence where Element: LedgerRow {
    /// The records of these rows, in order; a row `record` maps to nil is skipped.
    public func records<Record>(_ record: (Element) throws(StorageError) -> Record?) throws(StorageError) -> [Record] {
        var records: [Record] = []
        for row in self { if let mapped = try record(row) { records.append(mapped) } }
        return records
    }
}
