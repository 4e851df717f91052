import DeviceCheckModel
public import Policy
import TwoBitsCrypto

public typealias PolicySettings = PolicyConfiguration

extension PolicyConfiguration {
    /// Reads `bits` and `promotions`; both optional (default: bit0 promotion, bit1 ban, no promotions).
    static func parse(_ reader: inout ConfigReader) throws(ConfigurationError) -> PolicyConfiguration {
        var configuration = PolicyConfiguration.standard
        if var bits = try reader.object("bits") {
            let mode = try bits.optionalString("mode")
            switch mode {
            case nil:
                let roles = try (0...1).map { i throws(ConfigurationError) -> BitRole in
                    let name = try bits.string("bit\(i)", default: ServiceDefaults.Bits.role)
                    guard let role = BitRole(rawValue: name) else {
                        throw ConfigurationError(bits.field("bit\(i)"), "must be one of promotion, ban, unused")
                    }
                    return role
                }
                if roles == [.ban, .ban] { throw ConfigurationError(bits.field("bit1"), "at most one bit can be the ban bit") }
                configuration.layout = .roles(bit0: roles[0], bit1: roles[1])
            case "reinstall-counter":
                configuration.layout = .reinstallCounter(banAt: try bits.int("ban_at", default: ServiceDefaults.Bits.banAt, range: 1...3))
            case "none":
                configuration.layout = .none
            case let other?:
                throw ConfigurationError(bits.field("mode"), "must be \"reinstall-counter\" or \"none\" (or leave it out and give bit0/bit1 roles), not \"\(other)\"")
            }
            configuration.staleAfterMonths = try bits.optionalInt("stale_after_months", range: 1...1200)
            try bits.rejectUnknownFields()
        }

        let promotionBits = configuration.layout.promotionBits
        for (index, value) in (try reader.array("promotions") ?? []).enumerated() {
            var p = try ConfigReader(path: "promotions[\(index)]", value: value)
            let id = try p.string("id")
            guard id.count <= 64, id.utf8.allSatisfy({ $0 == 0x2D || $0 == 0x5F || ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x7A) }) else {
                throw ConfigurationError(p.field("id"), "must be 1-64 characters of a-z, 0-9, - and _")
            }
            guard let starts = YearMonth(try p.string("starts")) else { throw ConfigurationError(p.field("starts"), "must be a month YYYY-MM") }
            var ends: YearMonth?
            if let e = try p.optionalString("ends") {
                guard let month = YearMonth(e) else { throw ConfigurationError(p.field("ends"), "must be a month YYYY-MM") }
                guard month >= starts else { throw ConfigurationError(p.field("ends"), "is before starts") }
                ends = month
            }
            guard !promotionBits.isEmpty else {
                throw ConfigurationError(p.field("id"), "the bit layout \(configuration.layout) has no promotion bit; set bits.bit0 or bits.bit1 to \"promotion\"")
            }
            let bit: Int
            if let b = try p.optionalInt("bit", range: 0...1) {
                guard promotionBits.contains(b) else { throw ConfigurationError(p.field("bit"), "bit\(b) is not a promotion bit in the layout \(configuration.layout)") }
                bit = b
            } else {
                guard promotionBits.count == 1 else { throw ConfigurationError(p.field("bit"), "is required when both bits are promotion bits (0 or 1)") }
                bit = promotionBits[0]
            }
            try p.rejectUnknownFields()
            let promotion = Promotion(id: id, starts: starts, ends: ends, bit: bit)
            if configuration.promotions.contains(where: { $0.id == id }) { throw ConfigurationError(p.field("id"), "\"\(id)\" is used twice") }
            if let clash = configuration.promotions.first(where: { $0.overlaps(promotion) }) {
                throw ConfigurationError(p.field("id"), "\"\(id)\" overlaps \"\(clash.id)\" on bit\(bit); campaigns on one bit must not share a month")
            }
            configuration.promotions.append(promotion)
        }
        return configuration
    }
}
