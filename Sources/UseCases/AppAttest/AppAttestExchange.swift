import DeviceCheckModel
public import FoundationEssentials
public import Ledger
public import Policy
import TokenSigning
import TwoBitsCrypto

/// The strong tier end to end, Firebase App Check's shape: challenge → attestation → token (and an
/// artifact) → assertion → token. Apple's steps run first and write nothing; then, when the request
/// carries a DeviceCheck token, the device's bits are checked as for the fallback tier (bans hold in
/// every tier); only then is the challenge used up and the key stored or its counter moved, so a refusal
/// or an Apple outage leaves the client free to retry with the same challenge.
public struct AppAttestExchange: Sendable {
    /// The verification and storage underneath.
    public let service: AppAttestService
    public let settings: AppAttestSettings
    let tokens: TokenSettings
    let policy: BitPolicy
    let ledger: any AuditLog
    let keys: KeyRing
    let events: any UseCaseEvents

    public init(settings: AppAttestSettings, tokens: TokenSettings, policy: BitPolicy, ledger: any AppAttestChallengeStore & AppAttestKeyStore & AuditLog, keys: KeyRing, events: any UseCaseEvents) {
        self.service = AppAttestService(settings: settings, ledger: ledger)
        self.settings = settings
        self.tokens = tokens
        self.policy = policy
        self.ledger = ledger
        self.keys = keys
        self.events = events
    }

    /// A fresh one-time challenge.
    public func challenge() async throws(AppAttestExchangeError) -> IssuedChallenge {
        do { return try await service.issueChallenge() } catch { throw reported(.appAttest(error)) }
    }

    /// Verifies a new key's attestation and issues an `appattest` token.
    public func attest(_ request: AppAttestRequest, attestationObject: Data) async throws(AppAttestExchangeError) -> AppAttestIssue {
        let verified: VerifiedKeyAttestation
        do { verified = try service.verifyAttestation(keyID: request.keyID, attestationObject: attestationObject, challenge: request.challenge) } catch {
            throw reported(.appAttest(error))
        }
        try await admit(request)
        let record: AppAttestKeyRecord
        do { record = try await service.commit(verified) } catch { throw reported(.appAttest(error)) }
        return issue(for: record, request)
    }

    /// Verifies an assertion by an attested key and issues an `appattest` token.
    public func assert(_ request: AppAttestRequest, assertion: Data, clientData: Data) async throws(AppAttestExchangeError) -> AppAttestIssue {
        let verified: VerifiedKeyAssertion
        do { verified = try await service.verifyAssertion(keyID: request.keyID, assertion: assertion, clientData: clientData, challenge: request.challenge) } catch {
            throw reported(.appAttest(error))
        }
        // Before anything is written, as Apple's own checks: a refused key's challenge stays usable.
        if let risk = settings.risk, risk.refuses(verified.key.riskMetric) {
            throw reported(.appAttest(.riskMetricExceeded(metric: verified.key.riskMetric ?? 0, max: risk.maxMetric)))
        }
        try await admit(request)
        let record: AppAttestKeyRecord
        do { record = try await service.commit(verified) } catch { throw reported(.appAttest(error)) }
        return issue(for: record, request)
    }

    /// Revokes a key (audited); false when no such key was attested.
    public func revoke(keyID: String, reason: String, client: String) async throws(AppAttestExchangeError) -> Bool {
        let revoked: Bool
        do { revoked = try await service.revoke(keyID: keyID, reason: reason) } catch { throw .appAttest(error) }
        guard revoked else { return false }
        do { try await ledger.record(AuditEvent(client: client, action: .appAttestRevoke, subject: keyID, result: .ok, reason: reason)) } catch {
            throw .appAttest(.storage(error))
        }
        return true
    }

    /// The bans of the device whose DeviceCheck token came with the request (required or not, by configuration).
    private func admit(_ request: AppAttestRequest) async throws(AppAttestExchangeError) {
        guard let token = request.deviceToken else {
            if settings.requireDeviceToken { throw reported(.deviceTokenRequired) }
            return
        }
        do throws(PolicyError) {
            let admission = try await policy.admit(token: token, installID: request.installID, client: request.client)
            if let applied = admission.appliedPending { events.pendingActionApplied(applied) }
        } catch {
            if case .deviceBanned(let applied?) = error { events.pendingActionApplied(applied) }
            throw reported(.refused(error))
        }
    }

    private func issue(for key: AppAttestKeyRecord, _ request: AppAttestRequest) -> AppAttestIssue {
        let ttl = request.limitedUse ? tokens.limitedUseTTLSeconds : settings.tokenTTLSeconds
        let artifact = AppAttestArtifact(keyID: key.keyID)
        let issued = keys.issuer().issue(subject: request.installID ?? artifact.subject, tier: .appattest, limitedUse: request.limitedUse, ttlSeconds: ttl,
                                         binding: request.binding, risk: key.riskMetric)
        events.tokenIssued(tier: .appattest, limitedUse: request.limitedUse)
        return AppAttestIssue(token: IssuedToken(token: issued.token, tier: .appattest, expiresIn: ttl), artifact: artifact.value, counter: key.counter)
    }

    private func reported(_ error: AppAttestExchangeError) -> AppAttestExchangeError {
        events.appAttestRefused(error)
        return error
    }
}
