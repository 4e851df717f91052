import FoundationEssentials
import UseCases

/// The challenge's `enroll`: whether this install should attest a key now (docs/app-attest.md, "Rolling out").
/// Advisory: an app that already holds an attested key asserts whatever it says, and attestations are
/// verified alike either way; it spreads the first attestations over time and keeps them under Apple's rate.
struct AppAttestEnrollment: Sendable {
    /// What the challenge is for, as the app says (`purpose`); an assertion or a request proof never reaches Apple, so it
    /// takes no room under the cap.
    enum Purpose: String, Sendable, CaseIterable { case attestation, assertion, requestProof = "request_proof" }

    let rollout: AppAttestRollout?
    let cap: AttestationCap?
    let now: @Sendable () -> Date

    init(settings: AppAttestSettings, replicas: LiveReplicas, now: @escaping @Sendable () -> Date = { Date() }) {
        rollout = settings.rollout
        cap = settings.maxAttestationsPerSecond.map { AttestationCap(perSecond: $0, replicas: replicas, window: settings.challengeLifetime) }
        self.now = now
    }

    /// In the rollout, then (for an attestation) room under the cap, taken only when the install is in.
    func enroll(installID: String?, purpose: Purpose) -> Bool {
        if let rollout, !rollout.includes(installID: installID, at: now()) { return false }
        guard purpose == .attestation, let cap else { return true }
        return cap.admit(installID: installID)
    }
}
