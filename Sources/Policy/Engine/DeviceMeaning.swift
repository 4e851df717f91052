import DeviceCheck

/// What a device's bits mean under the layout.
public struct DeviceMeaning: Sendable, Equatable {
    /// The state as read (nil: never set).
    public let raw: BitState?
    /// True when a state exists but is older than `stale_after_months`: it counts as never set.
    public let stale: Bool
    public let banned: Bool
    /// Under the reinstall counter: the count; otherwise nil.
    public let reinstalls: Int?
    /// For each configured promotion whose bit is set by a claim made on or after its start.
    public let claims: [PromotionClaim]

    /// The state that counts (nil when never set or stale).
    public var effective: BitState? { stale ? nil : raw }
}

/// A promotion a device has claimed, and the month of the write that claimed it.
public struct PromotionClaim: Sendable, Equatable {
    public let promotionID: String
    public let month: YearMonth
}
