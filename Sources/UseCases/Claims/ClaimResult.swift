/// A claim's final answer, rendered once: now, or earlier under the same `Idempotency-Key`.
public enum ClaimResult: Sendable {
    /// This request's final verdict (claimed, or refused for good) and its answer as the renderer rendered it:
    /// the one stored under the key, to send unchanged.
    case answered(ClaimVerdict, RecordedAnswer)
    /// An earlier request with the same `Idempotency-Key` finished: its answer, to send again unchanged.
    case replayed(RecordedAnswer)
}
