public import FoundationEssentials

/// One result row, by column name.
public struct SQLiteRow: Sendable {
    public var values: [String: SQLiteValue] = [:]

    public func string(_ column: String) -> String? { if case .text(let s) = values[column] { return s }; return nil }
    public func int(_ column: String) -> Int? { if case .integer(let i) = values[column] { return Int(i) }; return nil }
    public func blob(_ column: String) -> Data? { if case .blob(let b) = values[column] { return b }; return nil }
}
