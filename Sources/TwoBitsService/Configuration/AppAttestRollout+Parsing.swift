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
        guard let date = (try? plain.parse(text)) ?? (try? fractional.parse(text)) else {
            throw ConfigurationError(ramp.field(name), "must be an RFC 3339 time such as 2026-12-01T00:00:00Z")
        }
        return date
    }
}
