public import FoundationEssentials

/// The check of an attestation's own receipt (`attStmt.receipt`, type ATTEST), run by the server at attestation:
/// Apple's receipt steps (signature, chain to the receipt root, payload, app id, freshness, field 3's key equal to
/// the credential's key), then its type and environment. Without it a device could attest with a garbage receipt,
/// so that no refresh ever succeeds and its risk metric stays unknown (docs/app-attest.md, "The risk metric").
public struct AttestationReceiptCheck: Sendable {
    /// Clock skew allowed between Apple and this server on top of the challenge's lifetime.
    public static let clockSkew: TimeInterval = 60

    /// Verifies against the receipt root: Apple Root CA - G3, or the sandbox's.
    public let verifier: ReceiptVerifier
    /// How far the receipt's creation may be from the verification time: Apple makes the receipt when the app
    /// attests, which is after the challenge was issued, so at most the challenge's lifetime ago (plus skew).
    public let window: TimeInterval

    public init(verifier: ReceiptVerifier, challengeLifetime: TimeInterval) {
        self.verifier = verifier
        window = challengeLifetime + Self.clockSkew
    }

    /// Verifies `receipt` for an attestation of `publicKey` by `appID` in `environment` at `time`.
    public func verify(_ receipt: Data, appID: AppID, publicKey: Data, environment: AppAttestEnvironment, at time: Date) throws(AppAttestFailure) {
        let verified: VerifiedReceipt
        do {
            verified = try verifier.verify(receipt, appID: appID.description, publicKey: publicKey, at: time, freshness: window)
        } catch {
            throw AppAttestFailure(.receiptInvalid, at: .receipt, error.description)
        }
        guard verified.type == .attest else {
            throw AppAttestFailure(.receiptInvalid, at: .receipt, "the receipt is of type \(verified.type.rawValue), not ATTEST: it is not this attestation's own")
        }
        // Field 7: "sandbox" for development keys, "production" for the others (seen in every real receipt).
        let expected = environment == .production ? "production" : "sandbox"
        if let found = verified.environment, found != expected {
            throw AppAttestFailure(.receiptInvalid, at: .receipt, "the receipt's environment is \(found.debugDescription), the attestation's \(expected.debugDescription)")
        }
    }
}
