import AppAttest
import Foundation
import Ledger
@testable import Sandbox
import TestSupport
import Testing
import TwoBitsCrypto
import TwoBitsService
import UseCases
import WireFormats

/// The strong tier's use cases against a real SQLite ledger and the sandbox's simulated devices: challenge,
/// attestation, assertions with rising counters, and every refusal with its reason.
@Suite struct AppAttestServiceTests {
    let authority = AppAttestAuthority()
    let appID = AppID(teamID: "TEAMID1234", bundleID: "com.example.strong")

    func withService(categories: Set<Int>? = nil, _ body: (AppAttestService, any Ledger) async throws -> Void) async throws {
        let directory = NSTemporaryDirectory() + "twobits-appattest-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let ledger = try DatabaseLocation.sqlite(path: directory + "/ledger.sqlite").openLedger(pool: .init())
        let settings = AppAttestSettings(apps: [appID], environment: .production, chainVerifier: authority.chainVerifier(),
                                         allowedValidationCategories: categories, receiptVerifier: authority.receiptAuthority.verifier)
        try await body(AppAttestService(settings: settings, ledger: ledger), ledger)
    }

    func device(category: Int? = nil) -> SimulatedAppAttestKey {
        SimulatedAppAttestKey(appID: appID, environment: .production, validationCategory: category, bundleVersion: nil, deviceID: nil)
    }

    func attestation(_ key: SimulatedAppAttestKey, challenge: String, fault: AttestationFault? = nil) -> Data {
        key.attestationObject(clientDataHash: SHA256Digest.hash(Data(base64URLEncoded: challenge)!), fault: fault, authority: authority, now: Date())
    }

    func assertion(_ key: SimulatedAppAttestKey, challenge: String, fault: AssertionFault? = nil) -> (Data, Data) {
        let clientData = Data(#"{"challenge":"\#(challenge)","action":"post"}"#.utf8)
        return (key.assertion(clientDataHash: SHA256Digest.hash(clientData), fault: fault).assertion, clientData)
    }

    func code(_ body: () async throws(AppAttestError) -> Void) async -> String? {
        do { try await body(); return nil } catch { return error.code }
    }

    @Test func attestationThenAssertionsWithRisingCounters() async throws {
        try await withService { service, ledger in
            let key = device()
            let keyID = key.keyID.base64EncodedString()
            let challenge = try await service.issueChallenge()
            #expect(Data(base64URLEncoded: challenge.value)?.count == 32)
            let record = try await service.attest(keyID: keyID, attestationObject: attestation(key, challenge: challenge.value), challenge: challenge.value)
            #expect(record.counter == 0 && record.appID == appID.description && record.environment == .production && !record.receipt.isEmpty)
            #expect(try await ledger.appAttestKey(id: keyID) == record)
            for expected in 1...3 as ClosedRange<UInt32> {
                let next = try await service.issueChallenge().value
                let (signed, clientData) = assertion(key, challenge: next)
                let after = try await service.assert(keyID: keyID, assertion: signed, clientData: clientData, challenge: next)
                #expect(after.counter == expected)
            }
        }
    }

    @Test func aChallengeIsUsedOnceAndOnlyIfIssued() async throws {
        try await withService { service, _ in
            let key = device()
            let keyID = key.keyID.base64EncodedString()
            let unissued = SecureRandom.bytes(32).base64URLEncodedString()
            #expect(await code { () async throws(AppAttestError) in
                _ = try await service.attest(keyID: keyID, attestationObject: attestation(key, challenge: unissued), challenge: unissued)
            } == "challenge_unknown_or_used")
            let challenge = try await service.issueChallenge().value
            _ = try await service.attest(keyID: keyID, attestationObject: attestation(key, challenge: challenge), challenge: challenge)
            let (signed, clientData) = assertion(key, challenge: challenge)
            #expect(await code { () async throws(AppAttestError) in
                _ = try await service.assert(keyID: keyID, assertion: signed, clientData: clientData, challenge: challenge)
            } == "challenge_unknown_or_used", "the attestation's challenge cannot serve an assertion too")
        }
    }

    @Test func aChallengeForAssertionsOnlyNeverAdmitsAnAttestation() async throws {
        try await withService { service, _ in
            let key = device()
            let keyID = key.keyID.base64EncodedString()
            let assertionOnly = try await service.issueChallenge(forAttestation: false).value
            #expect(await code { () async throws(AppAttestError) in
                _ = try await service.attest(keyID: keyID, attestationObject: attestation(key, challenge: assertionOnly), challenge: assertionOnly)
            } == "challenge_unknown_or_used")
            let enrolled = try await service.issueChallenge().value
            _ = try await service.attest(keyID: keyID, attestationObject: attestation(key, challenge: enrolled), challenge: enrolled)
            // Both kinds serve an assertion (apps that predate `purpose` ask with `{}`), each once.
            for challenge in [assertionOnly, try await service.issueChallenge().value] {
                let (signed, clientData) = assertion(key, challenge: challenge)
                _ = try await service.assert(keyID: keyID, assertion: signed, clientData: clientData, challenge: challenge)
                let (again, againData) = assertion(key, challenge: challenge)
                #expect(await code { () async throws(AppAttestError) in
                    _ = try await service.assert(keyID: keyID, assertion: again, clientData: againData, challenge: challenge)
                } == "challenge_unknown_or_used")
            }
        }
    }

    @Test func forgedAttestationsAreRefusedWithTheirReasonAndUseNoChallenge() async throws {
        try await withService { service, _ in
            let expected: [AttestationFault: String] = [.badChain: "bad_chain", .wrongNonce: "nonce_mismatch", .wrongAppID: "rp_id_mismatch",
                                                        .wrongEnvironment: "aaguid_mismatch", .wrongKeyID: "credential_id_mismatch", .expired: "bad_chain",
                                                        // The attestation's own receipt: anything but this key's fresh ATTEST receipt.
                                                        .garbageReceipt: "receipt_invalid", .emptyReceipt: "receipt_invalid",
                                                        .nestedReceipt: "receipt_invalid", .foreignReceipt: "receipt_invalid",
                                                        .staleReceipt: "receipt_invalid", .refreshedReceipt: "receipt_invalid",
                                                        .otherEnvironmentReceipt: "receipt_invalid"]
            #expect(Set(expected.keys) == Set(AttestationFault.allCases))
            for (fault, reason) in expected {
                let key = device()
                let challenge = try await service.issueChallenge().value
                #expect(await code { () async throws(AppAttestError) in
                    _ = try await service.attest(keyID: key.keyID.base64EncodedString(), attestationObject: attestation(key, challenge: challenge, fault: fault),
                                                 challenge: challenge)
                } == reason, "\(fault)")
                // The forged attempt used no challenge: the genuine one still goes through with it.
                _ = try await service.attest(keyID: key.keyID.base64EncodedString(), attestationObject: attestation(key, challenge: challenge), challenge: challenge)
            }
        }
    }

    @Test func anAttestationsReceiptIsCheckedAgainstTheReceiptRootNotTheAttestationRoot() async throws {
        // The same sandbox attestation, its receipt judged under Apple Root CA - G3: refused, as any receipt not
        // signed under the configured receipt root.
        let directory = NSTemporaryDirectory() + "twobits-appattest-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let ledger = try DatabaseLocation.sqlite(path: directory + "/ledger.sqlite").openLedger(pool: .init())
        let apple = AppAttestService(settings: AppAttestSettings(apps: [appID], environment: .production, chainVerifier: authority.chainVerifier()),
                                     ledger: ledger)
        let key = device()
        let challenge = try await apple.issueChallenge().value
        let refusal = await code { () async throws(AppAttestError) in
            _ = try await apple.attest(keyID: key.keyID.base64EncodedString(), attestationObject: attestation(key, challenge: challenge), challenge: challenge)
        }
        #expect(refusal == "receipt_invalid")
    }

    @Test func aKeyIsAttestedOnce() async throws {
        try await withService { service, _ in
            let key = device()
            let keyID = key.keyID.base64EncodedString()
            let first = try await service.issueChallenge().value
            _ = try await service.attest(keyID: keyID, attestationObject: attestation(key, challenge: first), challenge: first)
            let second = try await service.issueChallenge().value
            #expect(await code { () async throws(AppAttestError) in
                _ = try await service.attest(keyID: keyID, attestationObject: attestation(key, challenge: second), challenge: second)
            } == "key_already_attested")
        }
    }

    @Test func replayedForgedRevokedAndUnknownAssertionsAreRefused() async throws {
        try await withService { service, _ in
            let key = device()
            let keyID = key.keyID.base64EncodedString()
            let challenge = try await service.issueChallenge().value
            _ = try await service.attest(keyID: keyID, attestationObject: attestation(key, challenge: challenge), challenge: challenge)
            var next = try await service.issueChallenge().value
            var (signed, clientData) = assertion(key, challenge: next)
            _ = try await service.assert(keyID: keyID, assertion: signed, clientData: clientData, challenge: next)

            for (fault, reason) in [(AssertionFault.replayedCounter, "counter_not_increasing"), (.badSignature, "bad_signature"), (.wrongAppID, "rp_id_mismatch")] {
                next = try await service.issueChallenge().value
                (signed, clientData) = assertion(key, challenge: next, fault: fault)
                #expect(await code { () async throws(AppAttestError) in
                    _ = try await service.assert(keyID: keyID, assertion: signed, clientData: clientData, challenge: next)
                } == reason, "\(fault)")
            }
            next = try await service.issueChallenge().value
            (signed, _) = assertion(key, challenge: next)
            #expect(await code { () async throws(AppAttestError) in
                _ = try await service.assert(keyID: keyID, assertion: signed, clientData: Data(#"{"challenge":"another"}"#.utf8), challenge: next)
            } == "client_data_mismatch", "client data must carry the challenge")

            #expect(try await service.revoke(keyID: keyID, reason: "device stolen", audit: AuditEvent(client: "test", action: .appAttestRevoke, subject: keyID, result: .ok)))
            (signed, clientData) = assertion(key, challenge: next)
            #expect(await code { () async throws(AppAttestError) in
                _ = try await service.assert(keyID: keyID, assertion: signed, clientData: clientData, challenge: next)
            } == "key_revoked")
            #expect(await code { () async throws(AppAttestError) in
                _ = try await service.assert(keyID: "bm9rZXk=", assertion: signed, clientData: clientData, challenge: next)
            } == "key_unknown")
        }
    }

    /// A revoked key is refused before anything else is judged or written: a forged assertion learns only
    /// that the key is revoked, and the challenge it named is not used up (the ledger's counter update,
    /// which also refuses revoked keys, comes after the challenge is consumed).
    @Test func aRevokedKeyIsRefusedFirstAndItsChallengeStaysUnused() async throws {
        try await withService { service, _ in
            let revoked = device(), other = device()
            for key in [revoked, other] {
                let challenge = try await service.issueChallenge().value
                _ = try await service.attest(keyID: key.keyID.base64EncodedString(), attestationObject: attestation(key, challenge: challenge), challenge: challenge)
            }
            #expect(try await service.revoke(keyID: revoked.keyID.base64EncodedString(), reason: "device stolen", audit: AuditEvent(client: "test", action: .appAttestRevoke, subject: revoked.keyID.base64EncodedString(), result: .ok)))
            let next = try await service.issueChallenge().value
            for fault in [nil, AssertionFault.badSignature] {
                let (signed, clientData) = assertion(revoked, challenge: next, fault: fault)
                #expect(await code { () async throws(AppAttestError) in
                    _ = try await service.assert(keyID: revoked.keyID.base64EncodedString(), assertion: signed, clientData: clientData, challenge: next)
                } == "key_revoked", "\(String(describing: fault))")
            }
            let (signed, clientData) = assertion(other, challenge: next)
            let after = try await service.assert(keyID: other.keyID.base64EncodedString(), assertion: signed, clientData: clientData, challenge: next)
            #expect(after.counter == 1, "the challenge was still unused")
        }
    }

    @Test func validationCategoriesCanBeRestricted() async throws {
        try await withService(categories: [4]) { service, _ in
            for (category, reason) in [(3, "validation_category_refused"), (4, nil)] as [(Int, String?)] {
                let key = device(category: category)
                let challenge = try await service.issueChallenge().value
                #expect(await code { () async throws(AppAttestError) in
                    _ = try await service.attest(keyID: key.keyID.base64EncodedString(), attestationObject: attestation(key, challenge: challenge),
                                                 challenge: challenge)
                } == reason, "category \(category)")
            }
        }
    }
}
