import AppAttest
import AppAttestFixtures
import Foundation
import Testing
import TwoBitsCrypto
import WireFormats

@Suite struct RootCertificateTests {
    @Test func theCompiledInRootIsApplesAppAttestationRootCA() {
        let root = AppleRootCertificates.appAttestationRoot
        #expect(SHA256Digest.hash(root.der).hexString == "1cb9823ba28ba6ad2d33a006941de2ae4f513ef1d4e831b9f7e0fa7b6242c932")
        #expect(root.subject.contains("CN=Apple App Attestation Root CA"))
    }

    @Test func theCompiledInIntermediateIsAppleAppAttestationCA1AndOnlyAParseCache() throws {
        let ca1 = AppleRootCertificates.appAttestationCA1
        #expect(SHA256Digest.hash(ca1.der).hexString == "39ef7264e1340f9adda4199d3a028fdece2ecd7bf7372420fe808ad6da538426")
        #expect(ca1.subject.contains("CN=Apple App Attestation CA 1"))
        // Every fixture verifies the same without it (nothing depends on the cache but speed).
        for name in AppAttestFixture.attestationNames {
            let fixture = AppAttestFixture.load(name)
            let verifier = AttestationVerifier(appIDs: [fixture.appID], environment: fixture.environment!, knownIntermediates: [])
            let result = try verifier.verify(attestationObject: fixture.attestation!, keyID: fixture.keyID!, clientDataHash: fixture.clientDataHash!, at: fixture.verifyAt!)
            #expect(result == (try fixture.verifyAttestation()))
        }
    }
}
