public import Ledger
public import Policy

/// Why a claim was not answered with success.
public enum ClaimError: Error, Sendable {
    /// The `Idempotency-Key` was used for a different request in the last 24 hours.
    case idempotencyKeyConflict
    /// A request with the same `Idempotency-Key` is still running in this process; retry shortly.
    case inProgress
    /// The policy refused, or Apple or the ledger failed during the claim.
    case refused(PolicyError)
    /// The ledger failed outside the policy (reserving or completing the key).
    case storage(StorageError)
}
