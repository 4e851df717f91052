public import DeviceCheckModel

/// A campaign that each physical device may claim once, on one bit, between two months.
public struct Promotion: Sendable, Equatable {
    public let id: String
    public let starts: YearMonth
    /// Inclusive; nil means open-ended.
    public let ends: YearMonth?
    public let bit: Int

    public init(id: String, starts: YearMonth, ends: YearMonth?, bit: Int) {
        self.id = id
        self.starts = starts
        self.ends = ends
        self.bit = bit
    }

    public func isActive(in month: YearMonth) -> Bool {
        month >= starts && (ends.map { month <= $0 } ?? true)
    }

    /// True when both campaigns share a bit and a month.
    public func overlaps(_ other: Promotion) -> Bool {
        guard bit == other.bit else { return false }
        let endA = ends ?? YearMonth(year: 9999, month: 12)!
        let endB = other.ends ?? YearMonth(year: 9999, month: 12)!
        return starts <= endB && other.starts <= endA
    }
}
