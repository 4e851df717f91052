public import DeviceCheckModel

/// What the bits mean and how they change, as values: given what was read (a query's answer, the month, a
/// pending order, the audit trail's newest orders), the decision (the bits to write, the audit event to
/// record, a refusal). No Apple call, no store, no clock: the use cases read, ask these rules, and write.
/// Every write is read-modify-write of both bits.
///
/// Apple has no compare-and-set and no stable device id: two simultaneous requests from one phone
/// with two different fresh tokens cannot be serialised by any server. The last write wins; the
/// audit trail shows both.
public struct BitRules: Sendable, Equatable {
    public let configuration: PolicyConfiguration

    public init(configuration: PolicyConfiguration) {
        self.configuration = configuration
    }

    public var layout: BitLayout { configuration.layout }

    // MARK: Interpretation

    /// Interprets a query result under the layout, the staleness rule and the promotions, in `month`.
    public func meaning(of result: QueryResult, in month: YearMonth) -> DeviceMeaning {
        let raw = result.state
        var stale = false
        if let raw, let limit = configuration.staleAfterMonths, month.months(since: raw.lastUpdated) > limit { stale = true }
        let state = stale ? nil : raw
        let bits = state?.bits ?? .clear

        var banned = false
        var reinstalls: Int?
        switch layout {
        case .roles:
            if let b = layout.banBit { banned = bits[b] }
        case .reinstallCounter(let banAt):
            reinstalls = state == nil ? nil : bits.counter
            banned = state != nil && bits.counter >= banAt
        case .none:
            break
        }

        var claims: [PromotionClaim] = []
        if let state {
            for promotion in configuration.promotions where state.bits[promotion.bit] && state.lastUpdated >= promotion.starts
                && (promotion.ends.map { state.lastUpdated <= $0 } ?? true) {
                claims.append(PromotionClaim(promotionID: promotion.id, month: state.lastUpdated))
            }
        }
        return DeviceMeaning(raw: raw, stale: stale, banned: banned, reinstalls: reinstalls, claims: claims)
    }

    /// The device's meaning right after `bits` were written in `month`.
    public func meaning(afterWriting bits: Bits, in month: YearMonth) -> DeviceMeaning {
        meaning(of: .state(BitState(bits: bits, lastUpdated: month)), in: month)
    }

    /// The bits a write in `month` starts from: the effective bits, with set promotion bits that do not count
    /// as a claim of the campaign running in `month` on that bit cleared. Without this, the month stamp of the
    /// new write would make an old campaign's claim look like a claim of the current one.
    public func baseBits(for meaning: DeviceMeaning, in month: YearMonth) -> Bits {
        guard let state = meaning.effective else { return .clear }
        var bits = state.bits
        for bit in layout.promotionBits where bits[bit] {
            if let active = activePromotion(onBit: bit, in: month), state.lastUpdated < active.starts { bits[bit] = false }
        }
        return bits
    }

    func activePromotion(onBit bit: Int, in month: YearMonth) -> Promotion? {
        configuration.promotions.first { $0.bit == bit && $0.isActive(in: month) }
    }
}
