import AppAttest
import AppAttestFixtures
import Foundation
import Testing
import TwoBitsCrypto

/// Real attestations and assertions captured from iPhones, verified with the time fixed inside their leaf's validity.
@Suite struct AttestationFixtureTests {
    @Test func everyFixtureSourceIsPresent() {
        let names = AppAttestFixture.names
        #expect(names.filter { $0.hasPrefix("veehaitch-ios-14.") }.count == 7)
        #expect(names.contains("uebelack-attestation-development"))
        #expect(names.contains("uebelack-attestation-production"))
        #expect(names.contains("uebelack-assertion"))
        #expect(names.contains("bas-d-appattest"))
    }

    /// The server's check of an attestation's own receipt (`AttestationReceiptCheck`) on real iPhones' attestations:
    /// passes at the receipt's creation, under Apple Root CA - G3; an hour later the receipt is no fresh attestation's.
    @Test(arguments: AppAttestFixture.attestationNames)
    func theAttestationsOwnReceiptPassesTheServersCheckAtItsCreation(name: String) throws {
        let fixture = AppAttestFixture.load(name)
        let plain = try fixture.verifyAttestation()
        let created = try ReceiptPayload(try CMSSignedData(plain.receipt).content).creation
        let verifier = AttestationVerifier(appIDs: [fixture.appID], environment: fixture.environment!,
                                           receiptCheck: AttestationReceiptCheck(verifier: ReceiptVerifier(), challengeLifetime: 300))
        let checked = try verifier.verify(attestationObject: fixture.attestation!, keyID: fixture.keyID!, clientDataHash: fixture.clientDataHash!, at: created)
        #expect(checked.publicKey == plain.publicKey)
        do {
            _ = try verifier.verify(attestationObject: fixture.attestation!, keyID: fixture.keyID!, clientDataHash: fixture.clientDataHash!,
                                    at: created.addingTimeInterval(3_600))
            Issue.record("an hour-old ATTEST receipt passed")
        } catch {
            #expect(error.reason == .receiptInvalid || error.reason == .badChain, "\(error)")
        }
    }

    @Test(arguments: AppAttestFixture.attestationNames)
    func theAttestationThenItsAssertionsVerify(name: String) throws {
        let fixture = AppAttestFixture.load(name)
        let result = try fixture.verifyAttestation()
        #expect(result.keyID == fixture.keyID)
        #expect(result.publicKey.count == 65 && result.publicKey.first == 0x04)
        #expect(SHA256Digest.hash(result.publicKey) == fixture.keyID)
        #expect(result.environment == fixture.environment)
        #expect(result.appID == fixture.appID)
        #expect(result.counter == 0)
        #expect(result.receipt.count > 1000, "the PKCS#7 receipt is kept")
        #expect(result.validationCategory == nil, "iOS 14 to 17 captures have no extensions")
        if let published = fixture.publicKey { #expect(result.publicKey == published) }

        var counter = result.counter
        for assertion in fixture.assertions {
            #expect(assertion.counterBefore == counter)
            let verified = try AssertionVerifier().verify(assertion: assertion.assertion, clientData: assertion.clientData,
                                                          publicKey: result.publicKey, appID: result.appID, storedCounter: counter)
            #expect(verified.counter == assertion.counterAfter)
            counter = verified.counter
        }
    }

    @Test(arguments: AppAttestFixture.attestationNames)
    func theSameAttestationTodayHasExpired(name: String) {
        let fixture = AppAttestFixture.load(name)
        let failure = #expect(throws: AppAttestFailure.self) { try fixture.verifyAttestation(at: Date()) }
        #expect(failure?.reason == .badChain)
        #expect(failure?.step == .chain)
        #expect(failure?.detail == "certificate has expired")
    }

    @Test(arguments: AppAttestFixture.attestationNames)
    func beforeTheLeafWasIssuedItIsNotYetValid(name: String) {
        let fixture = AppAttestFixture.load(name)
        let failure = #expect(throws: AppAttestFailure.self) { try fixture.verifyAttestation(at: fixture.verifyAt!.addingTimeInterval(-400 * 86_400)) }
        #expect(failure?.reason == .badChain)
        #expect(failure?.detail == "certificate is not yet valid")
    }

    @Test func aWrongAppIDIsAnRPIDMismatch() throws {
        let fixture = AppAttestFixture.load("veehaitch-ios-14.2")
        let failure = #expect(throws: AppAttestFailure.self) {
            try fixture.verifyAttestation(appIDs: [AppID(teamID: "6MURL8TA57", bundleID: "de.vincent-haupert.other")])
        }
        #expect(failure?.reason == .rpIDMismatch)
        #expect(failure?.code == "rp_id_mismatch")
        // One of several configured app ids is enough.
        let result = try fixture.verifyAttestation(appIDs: [AppID("ABCDE12345.com.example")!, fixture.appID])
        #expect(result.appID == fixture.appID)
    }

    @Test func theEnvironmentsAAGUIDIsChecked() {
        let production = AppAttestFixture.load("uebelack-attestation-production")
        let asDevelopment = #expect(throws: AppAttestFailure.self) { try production.verifyAttestation(environment: .development) }
        #expect(asDevelopment?.reason == .aaguidMismatch)
        #expect(asDevelopment?.detail == "the production AAGUID, expected development")
        let development = AppAttestFixture.load("uebelack-attestation-development")
        let asProduction = #expect(throws: AppAttestFailure.self) { try development.verifyAttestation(environment: .production) }
        #expect(asProduction?.reason == .aaguidMismatch)
        #expect(asProduction?.code == "aaguid_mismatch")
    }

    @Test func aWrongKeyIDIsAKeyIDMismatch() {
        let fixture = AppAttestFixture.load("bas-d-appattest")
        let other = AppAttestFixture.load("veehaitch-ios-14.3").keyID!
        let failure = #expect(throws: AppAttestFailure.self) { try fixture.verifyAttestation(keyID: other) }
        #expect(failure?.reason == .keyIDMismatch)
        let short = #expect(throws: AppAttestFailure.self) { try fixture.verifyAttestation(keyID: Data(count: 31)) }
        #expect(short?.reason == .badFormat)
    }

    @Test func anotherChallengeIsANonceMismatch() {
        let fixture = AppAttestFixture.load("uebelack-attestation-development")
        let failure = #expect(throws: AppAttestFailure.self) {
            try fixture.verifyAttestation(clientDataHash: SHA256Digest.hash(Data("another challenge".utf8)))
        }
        #expect(failure?.reason == .nonceMismatch)
        #expect(failure?.step == .nonce)
    }

    @Test func anotherRootIsABadChain() throws {
        let fixture = AppAttestFixture.load("veehaitch-ios-14.4")
        // The intermediate alone as a trust anchor: partial chains are off, so the leaf is still refused.
        let intermediate = try X509Certificate(der: Self.x5c(of: fixture.attestation!)[1])
        let verifier = AttestationVerifier(appIDs: [fixture.appID], environment: .development,
                                           chainVerifier: try CertificateChainVerifier(roots: [intermediate]))
        let failure = #expect(throws: AppAttestFailure.self) {
            try verifier.verify(attestationObject: fixture.attestation!, keyID: fixture.keyID!, clientDataHash: fixture.clientDataHash!, at: fixture.verifyAt!)
        }
        #expect(failure?.reason == .badChain)
        #expect(failure?.detail == "unable to get issuer certificate")
    }

    @Test func aLeafWithoutItsIntermediateIsABadChain() throws {
        let fixture = AppAttestFixture.load("veehaitch-ios-14.4")
        let x5c = Self.x5c(of: fixture.attestation!)
        let leaf = try X509Certificate(der: x5c[0])
        let failure = #expect(throws: X509Error.self) {
            try AppleRootCertificates.appAttestationVerifier.verify(leaf: leaf, intermediates: [], at: fixture.verifyAt!)
        }
        #expect(failure == .untrusted(code: 20, reason: "unable to get local issuer certificate"))
        // With it, the same call passes.
        try AppleRootCertificates.appAttestationVerifier.verify(leaf: leaf, intermediates: [X509Certificate(der: x5c[1])], at: fixture.verifyAt!)
    }

    static func x5c(of object: Data) -> [Data] {
        let decoded = try! CBORDecoder().decode(object)
        return decoded["attStmt"]!["x5c"]!.arrayValue!.map { $0.bytesValue! }
    }
}
