public import Ledger
public import Policy

/// Why a claim has no final answer (final verdicts, refusals included, are a `ClaimResult`).
public enum ClaimError: Error, Sendable {
    /// The `Idempotency-Key` was used for a different request in the last 24 hours.
    case idempotencyKeyConflict
    /// A request with the same `Idempotency-Key` is still running in this process; retry shortly.
    case inProgress
    /// A refusal a retry may not get (`PolicyError.isFinal` false): Apple or the ledger failed during the claim, or
    /// it was cancelled. Nothing is stored under the key.
    case refused(PolicyError)
    /// The ledger failed outside the policy (reserving or completing the key).
    case storage(StorageError)
}
