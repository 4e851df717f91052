public import Ledger
public import Policy

/// Why no verdict could be given (the main API must refuse the request, and may ask again with the same proof:
/// nothing was used up).
public enum RequestProofError: Error, Sendable {
    /// The ledger could not be read or written.
    case storage(StorageError)
    /// The device token's check could not be made: Apple unavailable, or the ledger under the policy.
    case policy(PolicyError)
}
