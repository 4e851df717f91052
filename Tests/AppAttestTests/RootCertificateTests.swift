import AppAttest
import Foundation
import Testing
import TwoBitsCrypto

@Suite struct RootCertificateTests {
    @Test func theCompiledInRootIsApplesAppAttestationRootCA() {
        let root = AppleRootCertificates.appAttestationRoot
        #expect(SHA256Digest.hash(root.der).hexString == "1cb9823ba28ba6ad2d33a006941de2ae4f513ef1d4e831b9f7e0fa7b6242c932")
        #expect(root.subject.contains("CN=Apple App Attestation Root CA"))
    }
}
