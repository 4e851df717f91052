public import DeviceCheckModel
public import WireVocabulary

/// The answer to "could this device claim now?", without writing.
public struct Eligibility: Sendable, Equatable {
    /// Its text is the wire's (the refusals' are their error codes).
    public typealias Reason = PromotionEligibilityReason
    public let eligible: Bool
    public let reason: Reason
    public let claimedMonth: YearMonth?
}
