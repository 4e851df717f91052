import AppAttest
import AppAttestFixtures
import Foundation
import Testing
import TwoBitsCrypto
import WireFormats

/// TwoBitsCrypto's X.509 wrapper on Apple's real certificates.
@Suite struct X509CertificateTests {
    /// Computed, not stored: LeakSanitizer cannot follow Data held in a static.
    static var x5c: [Data] { AttestationFixtureTests.x5c(of: AppAttestFixture.load("bas-d-appattest").attestation!) }

    @Test func derParsesExactlyOneCertificate() throws {
        let leaf = try X509Certificate(der: Self.x5c[0])
        #expect(leaf.der == Self.x5c[0])
        #expect(leaf.issuer.contains("CN=Apple App Attestation CA 1"))
        #expect(throws: X509Error.self) { try X509Certificate(der: Self.x5c[0] + Data([0x00])) }
        #expect(throws: X509Error.self) { try X509Certificate(der: Self.x5c[0].prefix(100)) }
        #expect(throws: X509Error.self) { try X509Certificate(der: Data()) }
        #expect(throws: X509Error.self) { try X509Certificate(pem: "no certificate here") }
    }

    @Test func pemWithSeveralCertificatesKeepsThemInOrder() throws {
        let pem = AppleRootCertificates.appAttestationRootPEM + AppleRootCertificates.appAttestationRootPEM
        let all = try X509Certificate.certificates(pem: pem)
        #expect(all.count == 2)
        #expect(all[1].der == AppleRootCertificates.appAttestationRoot.der)
    }

    @Test func theNonceExtensionAndTheP256Point() throws {
        let leaf = try X509Certificate(der: Self.x5c[0])
        let value = try #require(leaf.extensionValue(oid: "1.2.840.113635.100.8.2"))
        #expect(value.count == 38 && value.prefix(6) == Data([0x30, 0x24, 0xA1, 0x22, 0x04, 0x20]))
        #expect(leaf.extensionValue(oid: "1.2.3.4") == nil)
        #expect(leaf.extensionValue(oid: "not an oid") == nil)
        let point = try leaf.p256PublicPoint()
        #expect(point.hexString == "0437c404fa2bbf8fbcf4ee7080573d5fa80c4f6cc3a22f7db43af92c394e7cd1c880c95ab422972625e8e673af1bda2b096654e9b602895601f925bb5941c53082")
        #expect(try P256PublicKey(uncompressedPoint: point).uncompressedPoint == point)
        // The root's key is P-384.
        #expect(throws: X509Error.self) { try AppleRootCertificates.appAttestationRoot.p256PublicPoint() }
    }

    @Test func anEmptyRootListIsRefused() {
        #expect(throws: X509Error.self) { try CertificateChainVerifier(roots: []) }
    }
}
