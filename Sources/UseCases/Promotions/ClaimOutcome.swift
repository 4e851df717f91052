public import DeviceCheckModel

/// A successful claim.
public struct ClaimOutcome: Sendable, Equatable {
    public let promotionID: String
    /// The month Apple stamped on the write that claimed it.
    public let claimedMonth: YearMonth
    /// Apple's transaction id of the write (nil when the claim was recognised from an earlier, interrupted attempt).
    public let transactionID: String?
}
