public import FoundationEssentials
public import Ledger

extension SQLiteRow: LedgerRow {
    public func text(_ column: String) throws(StorageError) -> String? {
        guard let value = values[column] else { throw Self.missing(column) }
        if case .text(let s) = value { return s }
        return nil
    }

    public func integer(_ column: String) throws(StorageError) -> Int64? {
        guard let value = values[column] else { throw Self.missing(column) }
        if case .integer(let i) = value { return i }
        return nil
    }

    public func data(_ column: String) throws(StorageError) -> Data? {
        guard let value = values[column] else { throw Self.missing(column) }
        if case .blob(let b) = value { return b }
        return nil
    }
}
