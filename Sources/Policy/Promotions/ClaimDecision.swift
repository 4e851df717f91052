public import DeviceCheckModel

/// A claim the rules let through.
public enum ClaimDecision: Sendable, Equatable {
    /// A resuming claim found in place: the earlier attempt of the same request wrote it, nothing to write.
    case inPlace(claimedMonth: YearMonth)
    /// Write these bits (the promotion's bit set on the base bits).
    case write(Bits)
}
