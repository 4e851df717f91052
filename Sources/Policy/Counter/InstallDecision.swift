public import DeviceCheckModel
public import Ledger

/// What a registration writes under the reinstall counter.
public struct InstallDecision: Sendable, Equatable {
    /// The count written.
    public let reinstalls: Int
    /// True when this registration reaches `ban_at`.
    public let banned: Bool
    /// The audit event's result once written (`banned` or `ok`), and its reason.
    public let result: AuditResult
    public let reason: String?

    /// The bits to write.
    public var bits: Bits { Bits(counter: reinstalls) }
}
