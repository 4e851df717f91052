import FoundationEssentials
import TwoBitsCrypto
import UseCases
import WireFormats

extension AppAttestRollout {
    /// `app_attest.rollout`: a percentage, or `{"from", "to", "from_percent", "to_percent"}` (docs/configuration.md).
    /// Nil when absent (every install is asked).
    static func parse(_ section: inout ConfigReader) throws(ConfigurationError) -> AppAttestRollout? {
        let field = section.field("rollout")
        guard let value = section.raw("rollout") else { return nil }
        if case .object = value {
            var ramp = try ConfigReader(path: field, value: value)
            let from = try time(&ramp, "from"), to = try time(&ramp, "to")
            guard from < to else { throw ConfigurationError(ramp.field("to"), "must be later than \(ramp.field("from"))") }
            let start = try basisPoints(ramp.raw("from_percent"), ramp.field("from_percent")) ?? 0
            let end = try basisPoints(ramp.raw("to_percent"), ramp.field("to_percent")) ?? 10_000
            // A falling share would drop installs already asked to attest.
            guard end >= start else { throw ConfigurationError(ramp.field("to_percent"), "must be at least from_percent: the share only rises") }
            try ramp.rejectUnknownFields()
            return AppAttestRollout(from: from, to: to, fromBasisPoints: start, toBasisPoints: end)
        }
        guard let share = try basisPoints(value, field) else { return nil }
        return AppAttestRollout(basisPoints: share)
    }

    /// A percentage 0-100 in hundredths of a percent; at most two decimals (the buckets' resolution).
    private static func basisPoints(_ value: JSONValue?, _ field: String) throws(ConfigurationError) -> Int? {
        let problem = ConfigurationError(field, "must be a percentage from 0 to 100 with at most two decimals, or {\"from\", \"to\"} times of a ramp")
        let number: Double
        switch value {
        case nil: return nil
        case .int(let i)?: number = Double(i)
        case .double(let d)?: number = d
        default: throw problem
        }
        guard number.isFinite, number >= 0, number <= 100 else { throw problem }
        let scaled = number * 100
        guard abs(scaled - scaled.rounded()) < 1e-6 else { throw problem }
        return Int(scaled.rounded())
    }

    /// An RFC 3339 time with its offset (`2026-12-01T00:00:00Z`).
    private static func time(_ ramp: inout ConfigReader, _ name: String) throws(ConfigurationError) -> Date {
        let text = try ramp.string(name)
        let plain = Date.ISO8601FormatStyle(), fractional = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
        guard calendarFieldsExist(text), let date = (try? plain.parse(text)) ?? (try? fractional.parse(text)) else {
            throw ConfigurationError(ramp.field(name), "must be an RFC 3339 time that exists, such as 2026-12-01T00:00:00Z")
        }
        return date
    }

    /// Whether the date, time and offset fields of `text` (`YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)`) name a
    /// real instant. ISO8601FormatStyle rolls 2027-02-30 over to March 2 (and hour 24 into the next day) instead
    /// of refusing it, so a typo would silently move a ramp.
    static func calendarFieldsExist(_ text: String) -> Bool {
        let b = Array(text.utf8)
        func number(_ range: Range<Int>) -> Int? {
            guard range.upperBound <= b.count else { return nil }
            var n = 0
            for i in range {
                guard b[i] >= 0x30, b[i] <= 0x39 else { return nil }
                n = n * 10 + Int(b[i] - 0x30)
            }
            return n
        }
        guard b.count >= 20, let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
              let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
              (1...12).contains(month), hour <= 23, minute <= 59, second <= 59 else { return false }
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        let days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]
        guard (1...days).contains(day) else { return false }
        if b.last == UInt8(ascii: "Z") { return true }
        let end = b.count
        guard end >= 25, b[end - 6] == UInt8(ascii: "+") || b[end - 6] == UInt8(ascii: "-"),
              let offsetHours = number(end - 5..<end - 3), let offsetMinutes = number(end - 2..<end) else { return false }
        return offsetHours <= 23 && offsetMinutes <= 59
    }
}
