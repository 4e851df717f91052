public import Policy

/// How a claim ended, as `UseCaseEvents.claim` reports it.
public enum ClaimEvent: Sendable {
    /// Written now.
    case claimed
    /// Found in place by a retry whose earlier attempt recorded its intent (it may have written).
    case claimedOnRetry
    /// The stored answer of an earlier request with the same `Idempotency-Key` was replayed.
    case replayed
    /// A twin with the same `Idempotency-Key` is still running.
    case inProgress
    /// The policy refused the claim, or Apple or the ledger failed it.
    case refused(PolicyError)
}
