import AppAttest
import AppAttestFixtures
import Foundation

/// The verifiers over a capture, for the verifiers' suites (the captures themselves are read in AppAttestFixtures).
extension AppAttestFixture {
    func attestationVerifier(appIDs: [AppID]? = nil, environment: AppAttestEnvironment? = nil) -> AttestationVerifier {
        AttestationVerifier(appIDs: appIDs ?? [appID], environment: environment ?? self.environment!)
    }

    /// Verifies the attestation as captured, at its fixed time.
    func verifyAttestation(_ object: Data? = nil, keyID: Data? = nil, clientDataHash: Data? = nil, at: Date? = nil,
                           appIDs: [AppID]? = nil, environment: AppAttestEnvironment? = nil) throws(AppAttestFailure) -> VerifiedAttestation {
        try attestationVerifier(appIDs: appIDs, environment: environment)
            .verify(attestationObject: object ?? attestation!, keyID: keyID ?? self.keyID!, clientDataHash: clientDataHash ?? self.clientDataHash!,
                    at: at ?? verifyAt!)
    }
}
