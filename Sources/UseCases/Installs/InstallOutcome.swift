public import Ledger

/// The reinstall counter after registering an install.
public struct InstallOutcome: Sendable, Equatable {
    public let reinstalls: Int
    /// True when this registration reached `ban_at`. (A device banned before is refused with
    /// `PolicyError.deviceBanned`, so a returned outcome is never "banned earlier".)
    public let banned: Bool
    /// A pending ban or unban for the install id that was applied first.
    public let appliedPending: PendingDeviceAction.Kind?
}
