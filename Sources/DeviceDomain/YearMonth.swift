/// A calendar month in UTC, Apple's `last_update_time` precision ("YYYY-MM").
public struct YearMonth: Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
    public let year: Int
    public let month: Int

    public init?(year: Int, month: Int) {
        guard (1...12).contains(month), (1970...9999).contains(year) else { return nil }
        self.year = year
        self.month = month
    }

    /// Parses exactly "YYYY-MM".
    public init?(_ text: String) {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0].count == 4, parts[1].count == 2,
              parts.allSatisfy({ $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }),
              let y = Int(parts[0]), let m = Int(parts[1]) else { return nil }
        self.init(year: y, month: m)
    }

    /// The month containing the instant `seconds` after 1970-01-01 00:00 UTC (proleptic Gregorian); a `Date`'s
    /// is `YearMonth(containing:)` in DeviceCheckModel (this module has no Foundation).
    public init(containingSecondsSince1970 secondsSince1970: Double) {
        // Days to civil date (H. Hinnant's `civil_from_days`), in integers: a `Calendar` built for each call
        // showed in a claim's profile (the policy stamps every write with the current month; measured:
        // Benchmarks/HISTORY.md, 2026-11-26, 03:00-04:10).
        let seconds = secondsSince1970.rounded(.down)
        let clamped = seconds.isNaN ? 0 : Int(max(-1e15, min(1e15, seconds)))
        let days = clamped >= 0 ? clamped / 86_400 : -((-clamped + 86_399) / 86_400)
        let z = days + 719_468 // days since 0000-03-01
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100) // from March 1st
        let shiftedMonth = (5 * dayOfYear + 2) / 153 // 0 = March … 11 = February
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        self.year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        self.month = month
    }

    /// Months from `other` to `self` (positive when `self` is later).
    public func months(since other: YearMonth) -> Int { (year - other.year) * 12 + (month - other.month) }

    /// This month plus `count` months (negative goes back).
    public func adding(months count: Int) -> YearMonth {
        let index = year * 12 + (month - 1) + count
        return YearMonth(year: index / 12, month: index % 12 + 1)!
    }

    public var description: String {
        let y = String(year), m = String(month)
        return String(repeating: "0", count: max(0, 4 - y.count)) + y + "-" + (m.count < 2 ? "0" : "") + m
    }

    public static func < (a: YearMonth, b: YearMonth) -> Bool { (a.year, a.month) < (b.year, b.month) }

    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let value = YearMonth(text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "expected YYYY-MM, got \(text)"))
        }
        self = value
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(description)
    }
}
