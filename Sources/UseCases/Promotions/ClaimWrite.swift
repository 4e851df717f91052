import DeviceCheckModel
import Policy

/// A claim the rules let through and whose Apple update is next, carried out by `PromotionService.writeClaim`.
/// Whoever needs something durable before that update (the `Idempotency-Key`'s intent) records it first, and
/// writes nothing when it cannot.
public struct ClaimWrite: Sendable {
    /// What is about to be written, `promotion.claim <id> bit<b> -> (b0,b1) token:<prefix>`: the token only
    /// by its short digest.
    public let intent: String
    let promotion: Promotion
    let token: DeviceToken
    let bits: Bits
    /// The device as read before the write (the audit event's `bits_before`).
    let meaning: DeviceMeaning
    let client: String
    /// The month the claim is for, read once when the claim began.
    let month: YearMonth
}
