public import FoundationEssentials

/// A value bound to or read from SQLite.
public enum SQLiteValue: Sendable, Equatable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob(Data)
}

extension SQLiteValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral {
    public init(stringLiteral value: String) { self = .text(value) }
    public init(integerLiteral value: Int64) { self = .integer(value) }

    public static func optional(_ s: String?) -> SQLiteValue { s.map { .text($0) } ?? .null }
    public static func int(_ i: Int) -> SQLiteValue { .integer(Int64(i)) }
}
