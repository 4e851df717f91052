public import DeviceCheckModel

extension BitRules {
    /// The promotion by id, under a layout with a promotion bit.
    public func promotion(_ id: String) throws(PolicyError) -> Promotion {
        guard !layout.promotionBits.isEmpty else {
            throw .notEnabled("the bit layout \(layout) has no promotion bit")
        }
        guard let promotion = configuration.promotions.first(where: { $0.id == id }) else { throw .unknownPromotion(id) }
        return promotion
    }

    /// The promotion by id, checked to run in `month` (before anything is read).
    public func claimablePromotion(_ id: String, in month: YearMonth) throws(PolicyError) -> Promotion {
        let promotion = try promotion(id)
        guard promotion.isActive(in: month) else {
            throw .promotionNotActive(id: promotion.id, starts: promotion.starts, ends: promotion.ends)
        }
        return promotion
    }

    /// The claim of `promotion` by a device in `meaning`, in `month`: refused (thrown), found in place, or the
    /// bits to write.
    ///
    /// - Parameter resuming: true when an earlier attempt of this same request recorded its intent and may have
    ///   written already; a claim found in place is then this request's own, and answered as success.
    public func claim(_ promotion: Promotion, on meaning: DeviceMeaning, in month: YearMonth, resuming: Bool) throws(PolicyError) -> ClaimDecision {
        if meaning.banned { throw .deviceBanned() }
        if let claim = meaning.claims.first(where: { $0.promotionID == promotion.id }) {
            if resuming { return .inPlace(claimedMonth: claim.month) }
            throw .alreadyClaimed(claim.month)
        }
        var bits = baseBits(for: meaning, in: month)
        bits[promotion.bit] = true
        return .write(bits)
    }

    /// Whether a device in `meaning` could claim `promotion` in `month`.
    public func eligibility(_ promotion: Promotion, on meaning: DeviceMeaning, in month: YearMonth) throws(PolicyError) -> Eligibility {
        if meaning.banned { throw .deviceBanned() }
        if let claim = meaning.claims.first(where: { $0.promotionID == promotion.id }) {
            return Eligibility(eligible: false, reason: .alreadyClaimed, claimedMonth: claim.month)
        }
        guard promotion.isActive(in: month) else { return Eligibility(eligible: false, reason: .promotionNotActive, claimedMonth: nil) }
        return Eligibility(eligible: true, reason: .eligible, claimedMonth: nil)
    }
}
