import FoundationEssentials
public import Ledger
import TwoBitsCrypto
import WireFormats

/// The request proof's own kind of challenge: stored under a digest no attestation or assertion looks up, and
/// looked up under that digest alone, so a token-minting assertion's challenge never serves a proof, nor the reverse.
extension AppAttestService {
    /// A fresh challenge good for one request proof only, for `challenge_ttl_seconds`.
    public func issueRequestProofChallenge() async throws(AppAttestError) -> IssuedChallenge {
        let value = SecureRandom.bytes(32).base64URLEncodedString()
        let now = now()
        let expiresAt = now.addingTimeInterval(settings.challengeLifetime)
        let stored: Bool
        do { stored = try await ledger.issueAppAttestChallenge(digest: Self.requestProofDigest(value), until: expiresAt, now: now) } catch { throw .storage(error) }
        guard stored else { throw .storage(StorageError("a fresh challenge collided with a live one")) }
        return IssuedChallenge(value: value, expiresAt: expiresAt)
    }

    /// Uses the proof's challenge up (a request-proof challenge only), then moves the key's counter forward
    /// atomically, as `commit(_:)` does for an assertion: of replicas racing with one proof, one wins.
    public func commitRequestProof(_ assertion: VerifiedKeyAssertion) async throws(AppAttestError) -> AppAttestKeyRecord {
        try await consume(assertion.challenge, digests: [Self.requestProofDigest(assertion.challenge)], now: now())
        return try await advance(assertion)
    }

    /// How a request proof's challenge is stored: a digest neither an attestation nor an assertion looks up.
    static func requestProofDigest(_ challenge: String) -> String { SHA256Digest.hex("request-proof:" + challenge) }
}
