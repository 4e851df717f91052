public import Ledger

/// An attestation that passed Apple's steps and is not yet committed: its challenge is still unused and
/// its key not stored (`AppAttestService.commit`).
public struct VerifiedKeyAttestation: Sendable {
    /// The key as it will be stored.
    public let record: AppAttestKeyRecord
    let challenge: String
}
