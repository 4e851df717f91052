import DeviceCheckModel
public import FoundationEssentials
public import Ledger
import Policy
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
    let admission: DeviceAdmission
    let ledger: any AuditLog
    let receipts: any AppAttestReceiptStore
    /// Renews the ATTEST receipt at attestation when `app_attest.risk.check_at_attestation` (nil: never).
    let renewer: (any ReceiptRenewing)?
    let keys: KeyRing
    let events: any UseCaseEvents
    let now: @Sendable () -> Date

    public init(settings: AppAttestSettings, tokens: TokenSettings, admission: DeviceAdmission,
                ledger: any AppAttestChallengeStore & AppAttestKeyStore & AppAttestReceiptStore & AuditLog, renewer: (any ReceiptRenewing)?,
                keys: KeyRing, events: any UseCaseEvents, now: @escaping @Sendable () -> Date = { Date() }) {
        self.service = AppAttestService(settings: settings, ledger: ledger, now: now)
        self.receipts = ledger
        self.renewer = renewer
        self.now = now
        self.settings = settings
        self.tokens = tokens
        self.admission = admission
        self.ledger = ledger
        self.keys = keys
        self.events = events
    }

    /// A fresh one-time challenge; `forAttestation` false: good for an assertion only.
    public func challenge(forAttestation: Bool = true) async throws(AppAttestExchangeError) -> IssuedChallenge {
        do { return try await service.issueChallenge(forAttestation: forAttestation) } catch { throw reported(.appAttest(error)) }
    }

    /// Verifies a new key's attestation and issues an `appattest` token.
    public func attest(_ request: AppAttestRequest, attestationObject: Data) async throws(AppAttestExchangeError) -> AppAttestIssue {
        let verified: VerifiedKeyAttestation
        do { verified = try service.verifyAttestation(keyID: request.keyID, attestationObject: attestationObject, challenge: request.challenge) } catch {
            throw reported(.appAttest(error))
        }
        let renewed = try await riskAtAttestation(verified)
        try await admit(request)
        var record: AppAttestKeyRecord
        do { record = try await service.commit(verified) } catch { throw reported(.appAttest(error)) }
        if let renewed {
            // Best effort: the key is stored either way; without this the refresher renews it as any new key.
            let stored = (try? await receipts.storeAttestationReceipt(keyID: record.keyID, receipt: renewed.receipt, riskMetric: renewed.riskMetric,
                                                                     notBefore: renewed.notBefore, expiration: renewed.expiration, now: now())) ?? false
            if stored { record.riskMetric = renewed.riskMetric }
        }
        return issue(for: record, request)
    }

    /// With `check_at_attestation`, the new key's ATTEST receipt renewed at Apple: its metric counts the device's
    /// other keys, so a device over the limit gets no key (the challenge stays usable). An Apple outage or refusal
    /// lets the attestation through with the metric unknown: `unknown_metric_grace_seconds` then bounds it.
    private func riskAtAttestation(_ verified: VerifiedKeyAttestation) async throws(AppAttestExchangeError) -> RenewedReceipt? {
        guard let risk = settings.risk, risk.checkAtAttestation, let renewer else { return nil }
        guard case .renewed(let receipt) = await renewer.renew(receipt: verified.record.receipt, key: verified.record, now: now()) else { return nil }
        if case .exceeded(let metric) = risk.verdict(metric: receipt.riskMetric, attestedAt: verified.record.firstSeen, now: now()) {
            throw reported(.appAttest(.riskMetricExceeded(metric: metric, max: risk.maxMetric)))
        }
        return receipt
    }

    /// Verifies an assertion by an attested key and issues an `appattest` token.
    public func assert(_ request: AppAttestRequest, assertion: Data, clientData: Data) async throws(AppAttestExchangeError) -> AppAttestIssue {
        let verified: VerifiedKeyAssertion
        do { verified = try await service.verifyAssertion(keyID: request.keyID, assertion: assertion, clientData: clientData, challenge: request.challenge) } catch {
            throw reported(.appAttest(error))
        }
        // Before anything is written, as Apple's own checks: a refused key's challenge stays usable.
        if let risk = settings.risk {
            switch risk.verdict(metric: verified.key.riskMetric, attestedAt: verified.key.firstSeen, now: now()) {
            case .allowed: break
            case .exceeded(let metric): throw reported(.appAttest(.riskMetricExceeded(metric: metric, max: risk.maxMetric)))
            case .unknownTooLong(let attestedAt): throw reported(.appAttest(.riskMetricUnknown(attestedAt: attestedAt, grace: risk.unknownGrace)))
            }
        }
        try await admit(request)
        let record: AppAttestKeyRecord
        do { record = try await service.commit(verified) } catch { throw reported(.appAttest(error)) }
        return issue(for: record, request)
    }

    /// Revokes a key, audited in the same transaction; false when no such key was attested.
    public func revoke(keyID: String, reason: String, client: String) async throws(AppAttestExchangeError) -> Bool {
        let audit = AuditEvent(client: client, action: .appAttestRevoke, subject: keyID, result: .ok, reason: reason)
        do { return try await service.revoke(keyID: keyID, reason: reason, audit: audit) } catch { throw .appAttest(error) }
    }

    /// The bans of the device whose DeviceCheck token came with the request (required or not, by configuration).
    private func admit(_ request: AppAttestRequest) async throws(AppAttestExchangeError) {
        guard let token = request.deviceToken else {
            if settings.requireDeviceToken { throw reported(.deviceTokenRequired) }
            return
        }
        do throws(PolicyError) {
            let admitted = try await admission.admit(token: token, installID: request.installID, client: request.client)
            if let applied = admitted.appliedPending { events.pendingActionApplied(applied) }
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
