import AppAttest
import Foundation
@testable import Sandbox
import TestSupport
import Testing
import TwoBitsCrypto

/// The sandbox's simulated App Attest devices, checked by the product's own verifiers: what they make
/// verifies, and each fault they are asked for fails at the step Apple's documentation names.
@Suite("Sandbox App Attest devices")
struct SandboxAppAttestTests {
    let now = Date()
    let authority = AppAttestAuthority()
    let appID = AppID(teamID: "TEAMID1234", bundleID: "com.example.sandboxed")

    func key(_ environment: AppAttestEnvironment = .production, category: Int? = nil, bundleVersion: String? = nil) -> SimulatedAppAttestKey {
        SimulatedAppAttestKey(appID: appID, environment: environment, validationCategory: category, bundleVersion: bundleVersion, deviceID: nil)
    }

    func verify(_ key: SimulatedAppAttestKey, fault: AttestationFault? = nil, environment: AppAttestEnvironment? = nil,
                at time: Date? = nil) throws(AppAttestFailure) -> VerifiedAttestation {
        let clientDataHash = SHA256Digest.hash(Data("challenge".utf8))
        // The receipt is made when the app attests, which a later verification time stands for.
        let object = key.attestationObject(clientDataHash: clientDataHash, fault: fault, authority: authority, now: now, receiptNow: time)
        let verifier = AttestationVerifier(appIDs: [appID], environment: environment ?? key.environment, chainVerifier: authority.chainVerifier(),
                                           knownIntermediates: [],
                                           receiptCheck: AttestationReceiptCheck(verifier: authority.receiptAuthority.verifier, challengeLifetime: 300))
        return try verifier.verify(attestationObject: object, keyID: key.keyID, clientDataHash: clientDataHash, at: time ?? now)
    }

    func reason(_ body: () throws(AppAttestFailure) -> Void) -> AppAttestFailure.Reason? {
        do { try body(); return nil } catch { return error.reason }
    }

    @Test(arguments: [AppAttestEnvironment.development, .production])
    func anAttestationVerifiesAgainstTheSandboxRoot(_ environment: AppAttestEnvironment) throws {
        let key = key(environment)
        let verified = try verify(key)
        #expect(verified.keyID == key.keyID)
        #expect(verified.publicKey == key.privateKey.publicKey.uncompressedPoint)
        #expect(verified.environment == environment)
        #expect(verified.appID == appID)
        #expect(!verified.receipt.isEmpty)
        #expect(verified.validationCategory == nil)
    }

    @Test func theSameObjectIsRefusedUnderApplesRealRoot() throws {
        let key = key()
        let clientDataHash = SHA256Digest.hash(Data("c".utf8))
        let object = key.attestationObject(clientDataHash: clientDataHash, fault: nil, authority: authority, now: now)
        let apple = AttestationVerifier(appIDs: [appID], environment: .production)
        #expect(reason { () throws(AppAttestFailure) in
            _ = try apple.verify(attestationObject: object, keyID: key.keyID, clientDataHash: clientDataHash, at: now)
        } == .badChain)
    }

    @Test func eachAttestationFaultFailsAtItsStep() {
        let expected: [AttestationFault: AppAttestFailure.Reason] = [
            .badChain: .badChain, .wrongNonce: .nonceMismatch, .wrongAppID: .rpIDMismatch, .wrongEnvironment: .aaguidMismatch,
            .wrongKeyID: .credentialIDMismatch, .expired: .badChain, .garbageReceipt: .receiptInvalid, .emptyReceipt: .receiptInvalid,
            .nestedReceipt: .receiptInvalid, .foreignReceipt: .receiptInvalid, .staleReceipt: .receiptInvalid, .refreshedReceipt: .receiptInvalid,
            .otherEnvironmentReceipt: .receiptInvalid,
        ]
        #expect(Set(expected.keys) == Set(AttestationFault.allCases))
        for (fault, want) in expected {
            let got = reason { () throws(AppAttestFailure) in _ = try verify(key(), fault: fault) }
            #expect(got == want, "\(fault)")
        }
    }

    @Test func aCertificateIsValidForThreeDaysOnly() {
        let key = key()
        #expect(reason { () throws(AppAttestFailure) in _ = try verify(key, at: now + 2 * 86_400) } == nil)
        #expect(reason { () throws(AppAttestFailure) in _ = try verify(key, at: now + 4 * 86_400) } == .badChain)
    }

    @Test func iOS27ExtensionsAreReadBack() throws {
        let verified = try verify(key(category: 4, bundleVersion: "2.7.1"))
        #expect(verified.validationCategory == .appStore)
        #expect(verified.bundleVersion == "2.7.1")
    }

    @Test func assertionsCarryRisingCountersAndVerify() throws {
        let key = key()
        var stored: UInt32 = 0
        for expectedCounter in 1...3 as ClosedRange<UInt32> {
            let clientData = Data(#"{"challenge":"c\#(expectedCounter)"}"#.utf8)
            let (assertion, counter) = key.assertion(clientDataHash: SHA256Digest.hash(clientData), fault: expectedCounter == 2 ? .atFlag : nil)
            #expect(counter == expectedCounter)
            let verified = try AssertionVerifier().verify(assertion: assertion, clientData: clientData, publicKey: key.privateKey.publicKey.uncompressedPoint,
                                                          appID: appID, storedCounter: stored)
            #expect(verified.counter == expectedCounter)
            stored = verified.counter
        }
    }

    @Test func eachAssertionFaultIsRefused() {
        let expected: [AssertionFault: AppAttestFailure.Reason] = [
            .replayedCounter: .counterNotIncreasing, .wrongAppID: .rpIDMismatch, .badSignature: .badSignature,
        ]
        for (fault, want) in expected {
            let key = key()
            let clientData = Data("client data".utf8)
            let first = key.assertion(clientDataHash: SHA256Digest.hash(clientData), fault: nil)
            let (assertion, _) = key.assertion(clientDataHash: SHA256Digest.hash(clientData), fault: fault)
            let got = reason { () throws(AppAttestFailure) in
                _ = try AssertionVerifier().verify(assertion: assertion, clientData: clientData, publicKey: key.privateKey.publicKey.uncompressedPoint,
                                                   appID: appID, storedCounter: first.counter)
            }
            #expect(got == want, "\(fault)")
        }
    }

    @Test func theRootPEMIsTheRoot() throws {
        let parsed = try X509Certificate(pem: authority.rootPEM)
        #expect(parsed.der == authority.root.der)
    }
}
