/// The reinstall counter after registering an install.
public struct InstallOutcome: Sendable, Equatable {
    public let reinstalls: Int
    public let banned: Bool
    /// True when this registration reached `ban_at`.
    public let bannedNow: Bool
    /// A pending ban or unban for the install id that was applied first.
    public let appliedPending: String?
}
