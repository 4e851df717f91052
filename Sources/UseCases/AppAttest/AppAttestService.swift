import AppAttest
public import FoundationEssentials
public import Ledger
import TwoBitsCrypto
import WireFormats

/// The strong tier's use cases, transport-free: one-time challenges, attestations (Apple's documented
/// verification, then the key stored) and assertions (verified against the stored key, the counter moved
/// forward atomically). Verification runs before anything is written, so a forged request uses up no
/// challenge; the challenge is consumed before the key is stored or the counter moves, so a challenge
/// counts once however many replicas race with it.
public struct AppAttestService: Sendable {
    let settings: AppAttestSettings
    let ledger: any AppAttestChallengeStore & AppAttestKeyStore
    let attestations: AttestationVerifier
    let assertions = AssertionVerifier()
    let now: @Sendable () -> Date

    public init(settings: AppAttestSettings, ledger: any AppAttestChallengeStore & AppAttestKeyStore, now: @escaping @Sendable () -> Date = { Date() }) {
        self.settings = settings
        self.ledger = ledger
        self.now = now
        attestations = AttestationVerifier(appIDs: settings.apps, environment: settings.environment, chainVerifier: settings.chainVerifier,
                                           receiptCheck: AttestationReceiptCheck(verifier: settings.receiptVerifier, challengeLifetime: settings.challengeLifetime))
    }

    /// A fresh challenge, stored (by its digest) until it expires or is used. `forAttestation` false: good for an
    /// assertion only (the app asked with purpose `assertion`, or was answered `enroll: false`), so the rollout
    /// and the attestation cap bind: such a challenge never admits an attestation.
    public func issueChallenge(forAttestation: Bool = true) async throws(AppAttestError) -> IssuedChallenge {
        let value = SecureRandom.bytes(32).base64URLEncodedString()
        let now = now()
        let expiresAt = now.addingTimeInterval(settings.challengeLifetime)
        let stored: Bool
        let digest = forAttestation ? Self.digest(value) : Self.assertionOnlyDigest(value)
        do { stored = try await ledger.issueAppAttestChallenge(digest: digest, until: expiresAt, now: now) } catch { throw .storage(error) }
        // 256 random bits colliding with a live challenge means the random source is broken: refuse to go on.
        guard stored else { throw .storage(StorageError("a fresh challenge collided with a live one")) }
        return IssuedChallenge(value: value, expiresAt: expiresAt)
    }

    /// Verifies the attestation of `keyID` (base64, as `generateKey` returned it) made with
    /// clientDataHash = SHA-256 of the challenge's bytes, then stores the key.
    public func attest(keyID: String, attestationObject: Data, challenge: String) async throws(AppAttestError) -> AppAttestKeyRecord {
        try await commit(verifyAttestation(keyID: keyID, attestationObject: attestationObject, challenge: challenge))
    }

    /// Apple's steps only, writing nothing: a caller with more to check (the device's bans) checks it
    /// between this and `commit`, so a refusal or an outage there leaves the challenge usable for a retry.
    public func verifyAttestation(keyID: String, attestationObject: Data, challenge: String) throws(AppAttestError) -> VerifiedKeyAttestation {
        // A key id that is not 32 bytes cannot be the credential's: the same refusal as a wrong one.
        guard let keyBytes = Data(base64Encoded: keyID), keyBytes.count == 32 else {
            throw .invalid(.keyIDMismatch, detail: "key_id must be the base64 of 32 bytes, as generateKey returns it")
        }
        let challengeBytes = try Self.challengeBytes(challenge)
        let now = now()
        let verified: VerifiedAttestation
        do {
            verified = try attestations.verify(attestationObject: attestationObject, keyID: keyBytes, clientDataHash: SHA256Digest.hash(challengeBytes), at: now)
        } catch { throw .invalid(error.reason, detail: error.detail) }
        try checkCategory(verified.validationCategory?.rawValue)
        let record = AppAttestKeyRecord(keyID: keyID, publicKey: verified.publicKey, counter: 0, receipt: verified.receipt,
                                        environment: verified.environment, appID: verified.appID.description,
                                        validationCategory: verified.validationCategory?.rawValue,
                                        firstSeen: Date(timeIntervalSince1970: (now.timeIntervalSince1970 * 1000).rounded() / 1000))   // as stored: ms
        return VerifiedKeyAttestation(record: record, challenge: challenge)
    }

    /// Uses the challenge up, then stores the key (once per key id).
    public func commit(_ attestation: VerifiedKeyAttestation) async throws(AppAttestError) -> AppAttestKeyRecord {
        try await consume(attestation.challenge, digests: [Self.digest(attestation.challenge)], now: now())
        let stored: Bool
        do { stored = try await ledger.storeAppAttestKey(attestation.record) } catch { throw .storage(error) }
        guard stored else { throw .keyAlreadyAttested }
        return attestation.record
    }

    /// Verifies an assertion by an attested key over `clientData`, which must hold the challenge as its
    /// `"challenge"` member (JSON), and moves the key's counter to the assertion's.
    public func assert(keyID: String, assertion: Data, clientData: Data, challenge: String) async throws(AppAttestError) -> AppAttestKeyRecord {
        try await commit(verifyAssertion(keyID: keyID, assertion: assertion, clientData: clientData, challenge: challenge))
    }

    /// Reads the key and runs Apple's steps, writing nothing (see `verifyAttestation`).
    public func verifyAssertion(keyID: String, assertion: Data, clientData: Data, challenge: String) async throws(AppAttestError) -> VerifiedKeyAssertion {
        _ = try Self.challengeBytes(challenge)
        guard let object = try? JSONValue.parse(clientData).objectValue, object["challenge"]?.stringValue == challenge else {
            throw .clientDataMismatch
        }
        let found: AppAttestKeyRecord?
        do { found = try await ledger.appAttestKey(id: keyID) } catch { throw .storage(error) }
        guard let key = found else { throw .keyUnknown }
        guard !key.isRevoked else { throw .keyRevoked }
        guard let appID = AppID(key.appID) else { throw .storage(StorageError("stored app id \(key.appID) is not TEAMID.bundle.id")) }
        let verified: VerifiedAssertion
        do {
            verified = try assertions.verify(assertion: assertion, clientData: clientData, publicKey: key.publicKey, appID: appID, storedCounter: key.counter)
        } catch {
            if error.reason == .counterNotIncreasing { throw .counterNotIncreasing(stored: key.counter) }
            throw .invalid(error.reason, detail: error.detail)
        }
        return VerifiedKeyAssertion(key: key, counter: verified.counter, challenge: challenge)
    }

    /// Uses the challenge up, then moves the counter forward atomically (one of racing replicas wins).
    public func commit(_ assertion: VerifiedKeyAssertion) async throws(AppAttestError) -> AppAttestKeyRecord {
        // Either kind serves an assertion: apps that predate `purpose` post `{}` for every challenge.
        try await consume(assertion.challenge, digests: [Self.assertionOnlyDigest(assertion.challenge), Self.digest(assertion.challenge)], now: now())
        return try await advance(assertion)
    }

    /// Moves the key's counter to the assertion's, atomically; its challenge already used.
    func advance(_ assertion: VerifiedKeyAssertion) async throws(AppAttestError) -> AppAttestKeyRecord {
        var key = assertion.key
        let advance: CounterAdvance
        do { advance = try await ledger.advanceAppAttestCounter(keyID: key.keyID, to: assertion.counter, now: now()) } catch { throw .storage(error) }
        switch advance {
        case .advanced: key.counter = assertion.counter
        case .notIncreasing(let stored): throw .counterNotIncreasing(stored: stored)
        case .revoked: throw .keyRevoked
        case .unknownKey: throw .keyUnknown
        }
        return key
    }

    /// The stored key, for admins.
    public func key(id: String) async throws(AppAttestError) -> AppAttestKeyRecord? {
        do { return try await ledger.appAttestKey(id: id) } catch { throw .storage(error) }
    }

    /// Revokes a key (its assertions are refused from now on) and records `audit` in the same transaction (no revocation unaudited). False, with nothing
    /// written, when no such key was attested.
    public func revoke(keyID: String, reason: String, audit: AuditEvent) async throws(AppAttestError) -> Bool {
        do { return try await ledger.revokeAppAttestKey(keyID: keyID, reason: reason, now: now(), audit: audit) } catch { throw .storage(error) }
    }

    /// Uses the challenge up under the first of `digests` the ledger holds (one of them at most was stored).
    func consume(_ challenge: String, digests: [String], now: Date) async throws(AppAttestError) {
        for digest in digests {
            let used: Bool
            do { used = try await ledger.consumeAppAttestChallenge(digest: digest, now: now) } catch { throw .storage(error) }
            if used { return }
        }
        throw .challengeUnknownOrUsed
    }

    /// How a challenge good for attestations (and assertions) is stored: the SHA-256 of its text, as before
    /// challenges had a purpose, so challenges issued by an older replica keep working.
    static func digest(_ challenge: String) -> String { SHA256Digest.hex(challenge) }

    /// How a challenge good for assertions only is stored: a digest no attestation looks up.
    static func assertionOnlyDigest(_ challenge: String) -> String { SHA256Digest.hex("assertion-only:" + challenge) }

    private func checkCategory(_ category: Int?) throws(AppAttestError) {
        guard let category else {
            if settings.requireValidationCategory { throw .validationCategoryRefused(nil) }
            return
        }
        if let allowed = settings.allowedValidationCategories, !allowed.contains(category) { throw .validationCategoryRefused(category) }
    }

    /// A challenge as issued: base64url of 32 bytes. Anything else was never issued.
    static func challengeBytes(_ challenge: String) throws(AppAttestError) -> Data {
        guard let bytes = Data(base64URLEncoded: challenge), bytes.count == 32 else { throw .challengeUnknownOrUsed }
        return bytes
    }
}
