/// The `reason` of a promotion's eligibility answer: eligible, or the refusal a claim would get now (whose
/// text is that refusal's `APIErrorCode`).
public enum PromotionEligibilityReason: String, Sendable, CaseIterable {
    case eligible
    case alreadyClaimed = "already_claimed"
    case promotionNotActive = "promotion_not_active"
}
