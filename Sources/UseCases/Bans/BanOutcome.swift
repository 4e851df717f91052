/// The result of a ban or unban order.
public struct BanOutcome: Sendable, Equatable {
    public let banned: Bool
    /// True when written to the device's bits now; false when pending until the install shows up.
    public let applied: Bool
}
