public import DeviceCheckModel

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
