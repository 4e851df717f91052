public import Policy

/// A claim that succeeded, now or earlier.
public enum ClaimResult: Sendable {
    /// Claimed by this request (or found in place by its retry).
    case claimed(ClaimOutcome)
    /// An earlier request with the same `Idempotency-Key` finished: its answer, to send again unchanged.
    case replayed(RecordedAnswer)
}
