public import DeviceCheckModel
import Ledger
public import Policy

/// A promotion's claim at Apple's bits (read the device, decide, write; `ClaimService` adds the
/// `Idempotency-Key` protocol around it) and the eligibility question.
public struct PromotionService: Sendable {
    let bits: DeviceBits

    public init(bits: DeviceBits) {
        self.bits = bits
    }

    /// Claims `promotionID` for the device: one claim per physical device per campaign (`prepareClaim`, then
    /// `writeClaim`, with nothing recorded between them).
    public func claim(_ promotionID: String, token: DeviceToken, client: String, resuming: Bool = false) async throws(PolicyError) -> ClaimOutcome {
        switch try await prepareClaim(promotionID, token: token, client: client, resuming: resuming) {
        case .inPlace(let outcome): outcome
        case .write(let claim): try await writeClaim(claim)
        }
    }

    /// Reads the device and decides the claim (`BitRules.claim`), up to Apple's write: refuses it, finds it in
    /// place, or returns the write to carry out with `writeClaim`.
    ///
    /// - Parameter resuming: true when an earlier attempt of this same request recorded its intent and may have
    ///   written already; a claim found in place is then this request's own, and answered as success.
    public func prepareClaim(_ promotionID: String, token: DeviceToken, client: String, resuming: Bool = false) async throws(PolicyError) -> ClaimStep {
        let month = bits.currentMonth
        let promotion = try bits.rules.claimablePromotion(promotionID, in: month)
        let meaning = bits.meaning(of: try await bits.queryBeforeWrite(token))
        switch try bits.rules.claim(promotion, on: meaning, in: month, resuming: resuming) {
        case .inPlace(let claimed):
            return .inPlace(ClaimOutcome(promotionID: promotion.id, claimedMonth: claimed, transactionID: nil))
        case .write(let newBits):
            return .write(ClaimWrite(intent: "promotion.claim \(promotion.id) bit\(promotion.bit) -> \(newBits) token:\(token.shortDigest)",
                                     promotion: promotion, token: token, bits: newBits, meaning: meaning, client: client, month: month))
        }
    }

    /// Carries out a claim's write at Apple (audited as every write is); call it once per `ClaimWrite`.
    public func writeClaim(_ claim: ClaimWrite) async throws(PolicyError) -> ClaimOutcome {
        let transaction = try await bits.write(claim.token, bits: claim.bits, before: claim.meaning, audit: AuditEvent(
            client: claim.client, action: .promotionClaim, subject: claim.promotion.id, result: .ok))
        return ClaimOutcome(promotionID: claim.promotion.id, claimedMonth: claim.month, transactionID: transaction)
    }

    /// Whether the device could claim now; reads only.
    public func eligibility(_ promotionID: String, token: DeviceToken) async throws(PolicyError) -> Eligibility {
        let promotion = try bits.rules.promotion(promotionID)
        let meaning = bits.meaning(of: try await bits.query(token))
        return try bits.rules.eligibility(promotion, on: meaning, in: bits.currentMonth)
    }
}
