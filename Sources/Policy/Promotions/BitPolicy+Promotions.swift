public import DeviceCheckModel
import Ledger

extension BitPolicy {
    /// The promotion by id, checked to be usable now.
    func promotion(_ id: String) throws(PolicyError) -> Promotion {
        guard !layout.promotionBits.isEmpty else {
            throw .notEnabled("the bit layout \(layout) has no promotion bit")
        }
        guard let promotion = configuration.promotions.first(where: { $0.id == id }) else { throw .unknownPromotion(id) }
        return promotion
    }

    /// Claims `promotionID` for the device: one claim per physical device per campaign (`prepareClaim`, then
    /// `writeClaim`, with nothing recorded between them).
    public func claim(_ promotionID: String, token: DeviceToken, client: String, resuming: Bool = false) async throws(PolicyError) -> ClaimOutcome {
        switch try await prepareClaim(promotionID, token: token, client: client, resuming: resuming) {
        case .inPlace(let outcome): outcome
        case .write(let claim): try await writeClaim(claim)
        }
    }

    /// Reads the device and decides the claim, up to Apple's write: refuses it, finds it in place, or returns
    /// the write to carry out with `writeClaim`.
    ///
    /// - Parameter resuming: true when an earlier attempt of this same request recorded its intent and may have
    ///   written already; a claim found in place is then this request's own, and answered as success.
    public func prepareClaim(_ promotionID: String, token: DeviceToken, client: String, resuming: Bool = false) async throws(PolicyError) -> ClaimStep {
        let promotion = try promotion(promotionID)
        let month = currentMonth
        guard promotion.isActive(in: month) else {
            throw .promotionNotActive(id: promotion.id, starts: promotion.starts, ends: promotion.ends)
        }
        let meaning = meaning(of: try await queryBeforeWrite(token))
        if meaning.banned { throw .deviceBanned() }
        if let claim = meaning.claims.first(where: { $0.promotionID == promotion.id }) {
            if resuming { return .inPlace(ClaimOutcome(promotionID: promotion.id, claimedMonth: claim.month, transactionID: nil)) }
            throw .alreadyClaimed(claim.month)
        }
        var bits = baseBits(for: meaning)
        bits[promotion.bit] = true
        return .write(ClaimWrite(intent: "promotion.claim \(promotion.id) bit\(promotion.bit) -> \(bits) token:\(token.shortDigest)",
                                 promotion: promotion, token: token, bits: bits, meaning: meaning, client: client, month: month))
    }

    /// Carries out a claim's write at Apple (audited as every write is); call it once per `ClaimWrite`.
    public func writeClaim(_ claim: ClaimWrite) async throws(PolicyError) -> ClaimOutcome {
        let promotion = claim.promotion, token = claim.token, bits = claim.bits, meaning = claim.meaning, client = claim.client
        let transaction = try await write(token, bits: bits, before: meaning, audit: AuditEvent(
            client: client, action: .promotionClaim, subject: promotion.id, result: .ok))
        return ClaimOutcome(promotionID: promotion.id, claimedMonth: claim.month, transactionID: transaction)
    }

    /// Whether the device could claim now; reads only.
    public func eligibility(_ promotionID: String, token: DeviceToken) async throws(PolicyError) -> Eligibility {
        let promotion = try promotion(promotionID)
        let meaning = meaning(of: try await query(token))
        if meaning.banned { throw .deviceBanned() }
        if let claim = meaning.claims.first(where: { $0.promotionID == promotion.id }) {
            return Eligibility(eligible: false, reason: .alreadyClaimed, claimedMonth: claim.month)
        }
        guard promotion.isActive(in: currentMonth) else { return Eligibility(eligible: false, reason: .promotionNotActive, claimedMonth: nil) }
        return Eligibility(eligible: true, reason: .eligible, claimedMonth: nil)
    }
}
