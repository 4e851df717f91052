import DeviceCheck

/// A successful claim.
public struct ClaimOutcome: Sendable, Equatable {
    public let promotionID: String
    /// The month Apple stamped on the write that claimed it.
    public let claimedMonth: YearMonth
    /// Apple's transaction id of the write (nil when the claim was recognised from an earlier, interrupted attempt).
    public let transactionID: String?
}

/// The answer to "could this device claim now?", without writing.
public struct Eligibility: Sendable, Equatable {
    public enum Reason: String, Sendable { case eligible, alreadyClaimed = "already_claimed", promotionNotActive = "promotion_not_active" }
    public let eligible: Bool
    public let reason: Reason
    public let claimedMonth: YearMonth?
}
