public import FoundationEssentials

/// App Attest's one-time challenges (docs/app-attest.md).
public protocol AppAttestChallengeStore: Sendable {
    /// Stores a one-time challenge by its digest, valid until `until`. False only if a live one has the same digest.
    func issueAppAttestChallenge(digest: String, until: Date, now: Date) async throws(StorageError) -> Bool
    /// Uses a challenge up: true exactly once for a live challenge, whichever process asks; false when it is
    /// unknown, expired or already used.
    func consumeAppAttestChallenge(digest: String, now: Date) async throws(StorageError) -> Bool
}
