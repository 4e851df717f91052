public import DeviceCheckModel

/// A promotion a device has claimed, and the month of the write that claimed it.
public struct PromotionClaim: Sendable, Equatable {
    public let promotionID: String
    public let month: YearMonth
}
