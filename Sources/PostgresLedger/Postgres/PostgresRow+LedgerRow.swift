import FoundationEssentials
import Ledger

extension PostgresRow: LedgerRow {
    func text(_ column: String) throws(StorageError) -> String? {
        guard let found = value(column) else { throw Self.missing(column) }
        if case .text(let s) = found { return s }
        return nil
    }

    func integer(_ column: String) throws(StorageError) -> Int64? {
        guard let found = value(column) else { throw Self.missing(column) }
        if case .integer(let i) = found { return i }
        return nil
    }

    func data(_ column: String) throws(StorageError) -> Data? {
        guard let found = value(column) else { throw Self.missing(column) }
        if case .bytea(let b) = found { return b }
        return nil
    }
}
