public import DeviceCheckModel

/// The answer to "could this device claim now?", without writing.
public struct Eligibility: Sendable, Equatable {
    public enum Reason: String, Sendable { case eligible, alreadyClaimed = "already_claimed", promotionNotActive = "promotion_not_active" }
    public let eligible: Bool
    public let reason: Reason
    public let claimedMonth: YearMonth?
}
