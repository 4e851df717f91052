public import Policy

/// A final verdict on a claim, handed to the caller's renderer so the answer it sends is the answer stored.
public enum ClaimVerdict: Sendable {
    case claimed(ClaimOutcome)
    /// Only final refusals (`PolicyError.isFinal`): transient ones are never stored.
    case refused(PolicyError)
}
