public import DeviceCheckModel

/// What to do with a pending order taken for an install that showed a device token.
public enum PendingDecision: Sendable, Equatable {
    /// Write these bits (audited as `ban.applied` / `unban.applied`), then remove the order.
    case apply(Bits)
    /// Not applicable to this device now: give the order back, still pending.
    case keep
}
