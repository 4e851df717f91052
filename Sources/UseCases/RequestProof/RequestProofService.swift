public import FoundationEssentials
public import Ledger
import Policy
import WireVocabulary

/// Request proofs (docs/app-attest.md, "Request proof"): a state-changing request signed by the device's attested
/// key, bound to its method, path and body, good once. The order of an assertion's: Apple's steps against the
/// stored key (writing nothing), the bound fields against what the main API received, the risk policy, the
/// device's bans, and only then the challenge used and the counter moved, atomically. No token is minted.
public struct RequestProofService: Sendable {
    let service: AppAttestService
    let settings: AppAttestSettings
    let admission: DeviceAdmission
    let audit: any AuditLog
    let events: any UseCaseEvents
    let now: @Sendable () -> Date

    public init(service: AppAttestService, settings: AppAttestSettings, admission: DeviceAdmission, audit: any AuditLog, events: any UseCaseEvents,
                now: @escaping @Sendable () -> Date = { Date() }) {
        self.service = service
        self.settings = settings
        self.admission = admission
        self.audit = audit
        self.events = events
        self.now = now
    }

    /// The strong tier's verification, bans and storage, shared with its exchange.
    public init(exchange: AppAttestExchange) {
        self.init(service: exchange.service, settings: exchange.settings, admission: exchange.admission, audit: exchange.ledger, events: exchange.events,
                  now: exchange.now)
    }

    /// A fresh one-time challenge that serves one request proof only (purpose `request_proof`).
    public func challenge() async throws(RequestProofError) -> IssuedChallenge {
        do { return try await service.issueRequestProofChallenge() } catch {
            throw unanswered(.storage(Self.storageError(error)))
        }
    }

    /// The verdict on `proof`. Throws only when no verdict can be given (storage, or Apple for the device token).
    public func verify(_ proof: RequestProof) async throws(RequestProofError) -> RequestProofVerdict {
        guard let signed = RequestProofClientData(proof.clientData) else { return refused(.clientDataMismatch) }
        // Not one of ours: no key has it, as for a key never attested.
        let keyID = AppAttestArtifact(proof.artifact)?.keyID ?? ""
        let verified: VerifiedKeyAssertion
        do {
            verified = try await service.verifyAssertion(keyID: keyID, assertion: proof.assertion, clientData: proof.clientData, challenge: signed.challenge)
        } catch {
            if case .storage(let storage) = error { throw unanswered(.storage(storage)) }
            let reason = Self.reason(error)
            // Anyone who saw an artifact can send a forgery: only a proof the key signed is audited (its counter step
            // and its RP ID come after the signature), so forgeries cannot grow the audit trail.
            let signedByKey = reason == .counterNotIncreasing || reason == .rpIDMismatch
            return await refused(reason, auditing: signedByKey ? keyID : nil, client: proof.client)
        }
        if let mismatch = proof.received.mismatch(signed: signed.request) {
            return await refused(mismatch, auditing: keyID, client: proof.client)
        }
        if let risk = settings.risk {
            switch risk.verdict(metric: verified.key.riskMetric, attestedAt: verified.key.firstSeen, now: now()) {
            case .allowed: break
            case .exceeded: return await refused(.riskMetricExceeded, auditing: keyID, client: proof.client)
            case .unknownTooLong: return await refused(.riskMetricUnknown, auditing: keyID, client: proof.client)
            }
        }
        if let refusal = try await admit(proof) { return await refused(refusal, auditing: keyID, client: proof.client) }
        let key: AppAttestKeyRecord
        do { key = try await service.commitRequestProof(verified) } catch {
            if case .storage(let storage) = error { throw unanswered(.storage(storage)) }
            // A racing replica (or request) used the challenge or moved the counter first: a replay.
            return await refused(Self.reason(error), auditing: keyID, client: proof.client)
        }
        events.requestProofVerified(refusal: nil)
        return .valid(ProvenRequest(artifact: AppAttestArtifact.value(forKeyID: key.keyID), counter: key.counter, riskMetric: key.riskMetric,
                                    installID: proof.installID))
    }

    /// The bans of the device whose DeviceCheck token came with the proof: a refusal, nil to go on.
    private func admit(_ proof: RequestProof) async throws(RequestProofError) -> RequestProofRefusalReason? {
        guard let token = proof.deviceToken else { return settings.requireDeviceToken ? .deviceTokenRequired : nil }
        do throws(PolicyError) {
            let admitted = try await admission.admit(token: token, installID: proof.installID, client: proof.client)
            if let applied = admitted.appliedPending { events.pendingActionApplied(applied) }
            return nil
        } catch {
            switch error {
            case .deviceBanned(let applied):
                if let applied { events.pendingActionApplied(applied) }
                return .deviceBanned
            case .apple(.invalidDeviceToken): return .invalidDeviceToken
            default: throw unanswered(.policy(error))
            }
        }
    }

    /// A refusal, counted; audited (reason and key id only) when `keyID` is the key that signed the proof.
    private func refused(_ reason: RequestProofRefusalReason, auditing keyID: String?, client: String) async -> RequestProofVerdict {
        events.requestProofVerified(refusal: reason)
        if let keyID {
            // Best effort: the refusal stands either way, and an outage must not turn it into a retry.
            _ = try? await audit.record(AuditEvent(client: client, action: .appAttestProofRefused, subject: keyID, result: .failed, reason: reason.rawValue))
        }
        return .refused(reason)
    }

    private func refused(_ reason: RequestProofRefusalReason) -> RequestProofVerdict {
        events.requestProofVerified(refusal: reason)
        return .refused(reason)
    }

    private func unanswered(_ error: RequestProofError) -> RequestProofError {
        events.requestProofUnanswered(error)
        return error
    }

    /// An assertion's refusal as a proof's reason (the same words).
    static func reason(_ error: AppAttestError) -> RequestProofRefusalReason { RequestProofRefusalReason(rawValue: error.code) }

    private static func storageError(_ error: AppAttestError) -> StorageError {
        if case .storage(let storage) = error { return storage }
        return StorageError(error.code)
    }
}
