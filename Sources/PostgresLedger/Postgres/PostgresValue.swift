import FoundationEssentials

/// A parameter bound to, or a value read from, PostgreSQL.
enum PostgresValue: Sendable, Equatable {
    case null
    case integer(Int64)
    case text(String)
    case bytea(Data)

    static func optional(_ s: String?) -> PostgresValue { s.map { .text($0) } ?? .null }
    static func int(_ i: Int) -> PostgresValue { .integer(Int64(i)) }
    static func ms(_ date: Date) -> PostgresValue { .integer(Int64((date.timeIntervalSince1970 * 1000).rounded())) }
}

/// One result row, by column name.
struct PostgresRow: Sendable {
    var columns: [String]
    var values: [PostgresValue]

    func value(_ column: String) -> PostgresValue? {
        columns.firstIndex(of: column).map { values[$0] }
    }
    func string(_ column: String) -> String? { if case .text(let s) = value(column) { return s }; return nil }
    func int64(_ column: String) -> Int64? { if case .integer(let i) = value(column) { return i }; return nil }
    func int(_ column: String) -> Int? { int64(column).map(Int.init) }
    func bytes(_ column: String) -> Data? { if case .bytea(let b) = value(column) { return b }; return nil }
    func bool(_ column: String) -> Bool? { string(column).map { $0 == "t" } }
    func date(_ column: String) -> Date { Date(timeIntervalSince1970: Double(int64(column) ?? 0) / 1000) }
}
