import AppAttest
import Foundation
import Testing
import TwoBitsCrypto

/// The steps real captures cannot reach, on attestations and assertions of our own CA and device
/// (laid out like the real ones: the first test shows the verifier accepts them as it accepts iPhones').
@Suite struct SyntheticAttestationTests {
    let ca = SyntheticAppAttest()

    static var iOS27Extensions: CBORValue { CBORValue.map([
        (.text("apple_bundle_version_01"), .text("2.1")), (.text("apple_validation_category_01"), .unsigned(2)),
    ]) }

    @Test func aWellFormedSyntheticAttestationAndAssertionsVerify() throws {
        let device = ca.attest()
        let result = try ca.verify(device)
        #expect(result.publicKey == device.key.publicKey.uncompressedPoint)
        #expect(result.receipt == Data("receipt".utf8))
        var counter = result.counter
        for next: UInt32 in [1, 2, 7] {
            let clientData = Data("{\"challenge\":\"c\(next)\"}".utf8)
            counter = try AssertionVerifier().verify(assertion: ca.assertion(device, clientData: clientData, counter: next), clientData: clientData,
                                                     publicKey: result.publicKey, appID: ca.appID, storedCounter: counter).counter
            #expect(counter == next)
        }
        // Apple's root does not vouch for our CA.
        let apple = AttestationVerifier(appIDs: [ca.appID], environment: .development)
        let failure = #expect(throws: AppAttestFailure.self) {
            try apple.verify(attestationObject: device.attestation, keyID: device.keyID, clientDataHash: device.clientDataHash, at: SyntheticAppAttest.now)
        }
        #expect(failure?.reason == .badChain)
    }

    /// Issue 34: Apple's validation guide built its sample attestation with the raw bytes of its challenge
    /// string as the client data hash; the verifier hashes it into the nonce whatever its length.
    @Test(arguments: [Data("test_server_challenge".utf8), Data([0x5A]), Data(repeating: 0xA5, count: 33), Data(repeating: 1, count: 200)])
    func aClientDataHashOfAnyLengthVerifies(raw: Data) throws {
        let device = ca.attest(.init(clientDataHash: raw))
        #expect(device.clientDataHash == raw)
        #expect(try ca.verify(device).keyID == device.keyID)
        // Still bound to those bytes: their SHA-256 (what the server would compute) is another nonce.
        let hashed = #expect(throws: AppAttestFailure.self) {
            try ca.verifier(.development).verify(attestationObject: device.attestation, keyID: device.keyID,
                                                 clientDataHash: SHA256Digest.hash(raw), at: SyntheticAppAttest.now)
        }
        #expect(hashed?.reason == .nonceMismatch)
    }

    @Test func aNonzeroAttestationCounterIsRefused() {
        let failure = #expect(throws: AppAttestFailure.self) { try ca.verify(ca.attest(.init(counter: 1))) }
        #expect(failure?.reason == .counterNotZero)
        #expect(failure?.code == "counter_not_zero")
    }

    @Test func aCredentialIDOtherThanTheKeyIDIsRefused() {
        let failure = #expect(throws: AppAttestFailure.self) { try ca.verify(ca.attest(.init(credentialID: Data(repeating: 7, count: 32)))) }
        #expect(failure?.reason == .credentialIDMismatch)
        let short = #expect(throws: AppAttestFailure.self) { try ca.verify(ca.attest(.init(credentialID: Data(repeating: 7, count: 16)))) }
        #expect(short?.reason == .credentialIDMismatch)
    }

    @Test func aCOSEKeyOtherThanTheCertificatesIsRefused() {
        let failure = #expect(throws: AppAttestFailure.self) { try ca.verify(ca.attest(.init(coseKey: P256PrivateKey.generate().publicKey))) }
        #expect(failure?.reason == .publicKeyMismatch)
    }

    @Test func productionAndDevelopmentAAGUIDs() throws {
        #expect(try ca.verify(ca.attest(.init(environment: .production)), environment: .production).environment == .production)
        let failure = #expect(throws: AppAttestFailure.self) { try ca.verify(ca.attest(.init(environment: .development)), environment: .production) }
        #expect(failure?.reason == .aaguidMismatch)
    }

    @Test func iOS27ExtensionsWithTheEDFlagClearAreReadAndRecorded() throws {
        let result = try ca.verify(ca.attest(.init(extensions: Self.iOS27Extensions, flags: 0x40)))
        #expect(result.validationCategory == .testFlight)
        #expect(result.bundleVersion == "2.1")
        let flagged = try ca.verify(ca.attest(.init(extensions: Self.iOS27Extensions, flags: 0xC0)))
        #expect(flagged.validationCategory == .testFlight)
    }

    @Test func assertionsVerifyWithTheATFlagSetOrClearAndWithExtensions() throws {
        let device = ca.attest()
        let key = try ca.verify(device).publicKey
        let clientData = Data("cd".utf8)
        for (flags, extensions) in [(UInt8(0x00), nil), (0x40, nil), (0x01, nil), (0x41, Self.iOS27Extensions), (0x80, Self.iOS27Extensions)] as [(UInt8, CBORValue?)] {
            let assertion = ca.assertion(device, clientData: clientData, counter: 5, flags: flags, extensions: extensions)
            let result = try AssertionVerifier().verify(assertion: assertion, clientData: clientData, publicKey: key, appID: ca.appID, storedCounter: 4)
            #expect(result.counter == 5, "flags \(flags)")
        }
    }

    @Test func outOfOrderAssertionsAreRefusedAsStale() throws {
        let device = ca.attest()
        let key = try ca.verify(device).publicKey
        let clientData = Data("cd".utf8)
        let second = ca.assertion(device, clientData: clientData, counter: 2)
        let first = ca.assertion(device, clientData: clientData, counter: 1)
        let stored = try AssertionVerifier().verify(assertion: second, clientData: clientData, publicKey: key, appID: ca.appID, storedCounter: 0).counter
        let failure = #expect(throws: AppAttestFailure.self) {
            try AssertionVerifier().verify(assertion: first, clientData: clientData, publicKey: key, appID: ca.appID, storedCounter: stored)
        }
        #expect(failure?.reason == .counterNotIncreasing)
    }
}
