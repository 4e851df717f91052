import DeviceCheckModel
@testable import Policy

/// The month the rules are asked in, and months around it.
let now = YearMonth(year: 2026, month: 6)!
func month(_ offset: Int) -> YearMonth { now.adding(months: offset) }

func bits(_ b0: Int, _ b1: Int) -> Bits { Bits(bit0: b0 == 1, bit1: b1 == 1) }

/// A query answer: the bits stamped `offset` months from `now`.
func state(_ b0: Int, _ b1: Int, at offset: Int = 0) -> QueryResult {
    .state(BitState(bits: bits(b0, b1), lastUpdated: month(offset)))
}

/// Rules with bit0 a promotion bit and bit1 the ban bit, and these campaigns.
func roles(stale: Int? = nil, _ promotions: [Promotion] = []) -> BitRules {
    BitRules(configuration: PolicyConfiguration(layout: .roles(bit0: .promotion, bit1: .ban), staleAfterMonths: stale, promotions: promotions))
}

func counter(banAt: Int, stale: Int? = nil) -> BitRules {
    BitRules(configuration: PolicyConfiguration(layout: .reinstallCounter(banAt: banAt), staleAfterMonths: stale))
}

/// A campaign on `bit` from `start` to `end` months from `now` (nil: open-ended).
func campaign(_ id: String, from start: Int, to end: Int?, bit: Int = 0) -> Promotion {
    Promotion(id: id, starts: month(start), ends: end.map(month), bit: bit)
}

/// The refusal `body` throws, as text (nil when it throws none).
func refusal<T>(_ body: () throws -> T) -> String? {
    do {
        _ = try body()
        return nil
    } catch {
        return "\(error)"
    }
}
