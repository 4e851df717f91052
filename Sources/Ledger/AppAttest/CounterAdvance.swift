/// The outcome of moving an App Attest key's assertion counter forward (`Ledger.advanceAppAttestCounter`).
public enum CounterAdvance: Sendable, Equatable {
    /// The counter now holds the new value; this assertion is the one that won.
    case advanced
    /// The stored counter is already at or above the new value: a replay, or a concurrent assertion won.
    case notIncreasing(stored: UInt32)
    /// The key was revoked; its assertions are refused.
    case revoked
    /// No such key was attested.
    case unknownKey
}
