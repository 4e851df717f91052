public import Ledger

/// An assertion that passed Apple's steps against the stored key and is not yet committed: its challenge
/// is still unused and the key's counter not moved (`AppAttestService.commit`).
public struct VerifiedKeyAssertion: Sendable {
    /// The key as read before the assertion.
    public let key: AppAttestKeyRecord
    /// The assertion's counter, above the key's when verified.
    public let counter: UInt32
    let challenge: String
}
