import AppAttest
import DeviceCheckModel
import Foundation
import Ledger
import Locking
import Policy
@testable import Sandbox
import TestSupport
import Testing
import TokenSigning
import TwoBitsCrypto
import TwoBitsService
import UseCases
import WireFormats
import WireVocabulary

/// Apple for the device-token checks: one token reads banned, one is refused, one finds Apple down; any other clear.
struct BanningApple: DeviceCheckAPI {
    static let banned = DeviceToken(Data("the banned device's token, long enough".utf8).base64EncodedString())!
    static let refused = DeviceToken(Data("a token Apple refuses, long enough too".utf8).base64EncodedString())!
    static let down = DeviceToken(Data("a token asked while Apple is unavailable".utf8).base64EncodedString())!
    static let clear = DeviceToken(Data("a clear device's token, long enough again".utf8).base64EncodedString())!

    func validate(_ token: DeviceToken) async throws(DeviceCheckError) { _ = try await query(token) }
    func query(_ token: DeviceToken) async throws(DeviceCheckError) -> QueryResult {
        if token == Self.refused { throw .invalidDeviceToken }
        if token == Self.down { throw .unavailable(.timedOut) }
        guard token == Self.banned else { return .neverSet }
        return .state(BitState(bits: Bits(bit0: false, bit1: true), lastUpdated: YearMonth(containing: Date())))
    }
    func update(_ token: DeviceToken, bits: Bits) async throws(DeviceCheckError) -> String { "t" }
}

/// Counts what the use case reports.
final class RecordingEvents: UseCaseEvents {
    let verdicts = Lock<[String]>([])
    func claim(promotion: String, _ event: ClaimEvent) {}
    func exchangeRefused(_ error: ExchangeError) {}
    func appAttestRefused(_ error: AppAttestExchangeError) {}
    func tokenIssued(tier: Tier, limitedUse: Bool) {}
    func appAttestFallback(reason: AppAttestFallbackReason) {}
    func pendingActionApplied(_ kind: PendingDeviceAction.Kind) {}
    func tokenVerified(failure: TokenVerifier.Failure?) {}
    func limitedUseTokenConsumed(first: Bool) {}
    func requestProofVerified(refusal: RequestProofRefusalReason?) { verdicts.withLock { $0.append(refusal?.rawValue ?? "valid") } }
    func requestProofUnanswered(_ error: RequestProofError) { verdicts.withLock { $0.append("unanswered") } }
}

/// The request proof's use case over a real SQLite ledger and the sandbox's simulated iPhones: a valid proof counts
/// once, each refusal has its reason and writes nothing (the audit event of a proof the key signed aside), and a
/// challenge of another purpose never serves a proof, nor a proof's another purpose.
@Suite struct RequestProofServiceTests {
    let authority = AppAttestAuthority()
    let appID = AppID(teamID: "TEAMID1234", bundleID: "com.example.strong")
    // Computed, not stored: a static Data's buffer outlives the run and LeakSanitizer reports it at exit.
    static var body: Data { Data(#"{"amount":100,"currency":"EUR"}"#.utf8) }

    struct Setup {
        let service: AppAttestService
        let proofs: RequestProofService
        let ledger: any Ledger
        let events: RecordingEvents
    }

    func withProofs(risk: RiskMetricPolicy? = nil, requireDeviceToken: Bool = false, later: TimeInterval = 0,
                    _ body: (Setup) async throws -> Void) async throws {
        let directory = NSTemporaryDirectory() + "twobits-proofs-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let ledger = try DatabaseLocation.sqlite(path: directory + "/ledger.sqlite").openLedger(pool: .init())
        let settings = AppAttestSettings(apps: [appID], environment: .production, chainVerifier: authority.chainVerifier(),
                                         requireDeviceToken: requireDeviceToken, risk: risk, receiptVerifier: authority.receiptAuthority.verifier)
        let service = AppAttestService(settings: settings, ledger: ledger)
        let bits = DeviceBits(rules: BitRules(configuration: PolicyConfiguration(layout: .roles(bit0: .promotion, bit1: .ban), promotions: [])),
                              apple: BanningApple(), ledger: ledger)
        let events = RecordingEvents()
        let proofs = RequestProofService(service: service, settings: settings, admission: DeviceAdmission(bits: bits, ledger: ledger), audit: ledger, events: events,
                                         now: { Date().addingTimeInterval(later) })
        try await body(Setup(service: service, proofs: proofs, ledger: ledger, events: events))
    }

    /// An attested key and its artifact.
    func attested(_ setup: Setup) async throws -> (SimulatedAppAttestKey, String) {
        let key = SimulatedAppAttestKey(appID: appID, environment: .production, validationCategory: nil, bundleVersion: nil, deviceID: nil)
        let challenge = try await setup.service.issueChallenge().value
        let object = key.attestationObject(clientDataHash: SHA256Digest.hash(Data(base64URLEncoded: challenge)!), fault: nil, authority: authority, now: Date())
        _ = try await setup.service.attest(keyID: key.keyID.base64EncodedString(), attestationObject: object, challenge: challenge)
        return (key, AppAttestArtifact.value(forKeyID: key.keyID.base64EncodedString()))
    }

    static func digest(_ body: Data) -> String { SHA256Digest.hash(body).base64URLEncodedString() }

    /// The client data the app signs, in the documented member order, and its assertion.
    static func signed(_ key: SimulatedAppAttestKey, challenge: String, method: String = "POST", path: String = "/v1/payouts?x=1",
                       body: Data = body, fault: AssertionFault? = nil) -> (clientData: Data, assertion: Data) {
        let clientData = Data(#"{"challenge":"\#(challenge)","method":"\#(method)","path":"\#(path)","body_sha256":"\#(digest(body))"}"#.utf8)
        return (clientData, key.assertion(clientDataHash: SHA256Digest.hash(clientData), fault: fault).assertion)
    }

    /// The proof as the main API forwards it, with what it received.
    static func proof(_ artifact: String, _ signed: (clientData: Data, assertion: Data), method: String = "POST", path: String = "/v1/payouts?x=1",
                      body: Data = body, deviceToken: DeviceToken? = nil, installID: String? = nil) -> RequestProof {
        RequestProof(artifact: artifact, clientData: signed.clientData, assertion: signed.assertion,
                     received: BoundRequest(method: method, path: path, bodySHA256: digest(body)), deviceToken: deviceToken, installID: installID,
                     client: "main")
    }

    func refusals(_ ledger: any Ledger) async throws -> [AuditEvent] {
        try await ledger.auditEvents(limit: 100, before: nil, filter: AuditFilter(action: AuditAction.appAttestProofRefused.rawValue))
    }

    @Test func aValidProofIsAcceptedOnceAndMovesTheCounter() async throws {
        try await withProofs { setup in
            let (key, artifact) = try await attested(setup)
            let challenge = try await setup.proofs.challenge().value
            let proof = Self.proof(artifact, Self.signed(key, challenge: challenge), deviceToken: BanningApple.clear, installID: "install-1")
            let verdict = try await setup.proofs.verify(proof)
            #expect(verdict == .valid(ProvenRequest(artifact: artifact, counter: 1, riskMetric: nil, installID: "install-1")))
            #expect(try await setup.ledger.appAttestKey(id: key.keyID.base64EncodedString())?.counter == 1)
            // The same proof again: its counter is the key's now, and its challenge is used.
            #expect(try await setup.proofs.verify(proof) == .refused(.counterNotIncreasing))
            #expect(setup.events.verdicts.withLock { $0 } == ["valid", "counter_not_increasing"])
            // The next proof of the same key goes on from there.
            let next = try await setup.proofs.challenge().value
            guard case .valid(let proven) = try await setup.proofs.verify(Self.proof(artifact, Self.signed(key, challenge: next))) else {
                Issue.record("the next proof was refused")
                return
            }
            #expect(proven.counter == 2 && proven.installID == nil)
        }
    }

    @Test func eachBoundFieldIsComparedAndAMismatchUsesNothingButIsAudited() async throws {
        try await withProofs { setup in
            let (key, artifact) = try await attested(setup)
            let challenge = try await setup.proofs.challenge().value
            let signed = Self.signed(key, challenge: challenge)
            var tampered = Self.body
            tampered[tampered.count - 3] ^= 0x01   // one byte changed between the app and the main API
            #expect(try await setup.proofs.verify(Self.proof(artifact, signed, body: tampered)) == .refused(.payloadMismatch))
            #expect(try await setup.proofs.verify(Self.proof(artifact, signed, method: "PUT")) == .refused(.methodMismatch))
            #expect(try await setup.proofs.verify(Self.proof(artifact, signed, path: "/v1/payouts?x=2")) == .refused(.pathMismatch))
            #expect(try await setup.proofs.verify(Self.proof(artifact, signed, path: "/v1/account/recovery")) == .refused(.pathMismatch))
            let audited = try await refusals(setup.ledger)
            #expect(audited.map { $0.reason ?? "" } == ["path_mismatch", "path_mismatch", "method_mismatch", "payload_mismatch"])
            #expect(audited.allSatisfy { $0.subject == key.keyID.base64EncodedString() && $0.result == .failed && $0.client == "main" })
            // Never the body or its digest.
            for event in audited {
                let text = String(decoding: try JSONEncoder().encode(event), as: UTF8.self)
                #expect(!text.contains(Self.digest(Self.body)) && !text.contains(Self.digest(tampered)) && !text.contains("amount"))
            }
            // Nothing was used: the request as signed still passes with the same proof, once.
            guard case .valid = try await setup.proofs.verify(Self.proof(artifact, signed)) else {
                Issue.record("the genuine request was refused after the mismatches")
                return
            }
        }
    }

    @Test func aChallengeOfAnotherPurposeNeverServesAProofNorTheReverse() async throws {
        try await withProofs { setup in
            let (key, artifact) = try await attested(setup)
            let keyID = key.keyID.base64EncodedString()
            // An attestation's and an assertion's challenges sign a perfect proof, which is still refused.
            for challenge in [try await setup.service.issueChallenge().value, try await setup.service.issueChallenge(forAttestation: false).value] {
                #expect(try await setup.proofs.verify(Self.proof(artifact, Self.signed(key, challenge: challenge))) == .refused(.challengeUnknownOrUsed))
                // And it still serves its own purpose (an assertion): the proof used nothing.
                let clientData = Data(#"{"challenge":"\#(challenge)"}"#.utf8)
                let assertion = key.assertion(clientDataHash: SHA256Digest.hash(clientData), fault: nil).assertion
                _ = try await setup.service.assert(keyID: keyID, assertion: assertion, clientData: clientData, challenge: challenge)
            }
            // A proof's challenge serves neither an assertion (a token) nor an attestation.
            let proofChallenge = try await setup.proofs.challenge().value
            let clientData = Data(#"{"challenge":"\#(proofChallenge)"}"#.utf8)
            let assertion = key.assertion(clientDataHash: SHA256Digest.hash(clientData), fault: nil).assertion
            await #expect(throws: AppAttestError.challengeUnknownOrUsed) {
                _ = try await setup.service.assert(keyID: keyID, assertion: assertion, clientData: clientData, challenge: proofChallenge)
            }
            let other = SimulatedAppAttestKey(appID: appID, environment: .production, validationCategory: nil, bundleVersion: nil, deviceID: nil)
            let object = other.attestationObject(clientDataHash: SHA256Digest.hash(Data(base64URLEncoded: proofChallenge)!), fault: nil, authority: authority, now: Date())
            await #expect(throws: AppAttestError.challengeUnknownOrUsed) {
                _ = try await setup.service.attest(keyID: other.keyID.base64EncodedString(), attestationObject: object, challenge: proofChallenge)
            }
            // Never issued at all.
            let unissued = SecureRandom.bytes(32).base64URLEncodedString()
            #expect(try await setup.proofs.verify(Self.proof(artifact, Self.signed(key, challenge: unissued))) == .refused(.challengeUnknownOrUsed))
        }
    }

    @Test func forgedUnknownAndRevokedProofsAreRefusedAndForgeriesAreNotAudited() async throws {
        try await withProofs { setup in
            let (key, artifact) = try await attested(setup)
            let challenge = try await setup.proofs.challenge().value
            #expect(try await setup.proofs.verify(Self.proof(artifact, Self.signed(key, challenge: challenge, fault: .badSignature))) == .refused(.badSignature))
            #expect(try await setup.proofs.verify(Self.proof(artifact, Self.signed(key, challenge: challenge, fault: .wrongAppID))) == .refused(.rpIDMismatch))
            var garbage = Self.signed(key, challenge: challenge)
            garbage.assertion = Data("not CBOR".utf8)
            #expect(try await setup.proofs.verify(Self.proof(artifact, garbage)) == .refused(.badFormat))
            // Client data that is not a proof's: the assertion's own shape, or one member more.
            let tokenShaped = Data(#"{"challenge":"\#(challenge)"}"#.utf8)
            let tokenAssertion = key.assertion(clientDataHash: SHA256Digest.hash(tokenShaped), fault: nil).assertion
            #expect(try await setup.proofs.verify(Self.proof(artifact, (tokenShaped, tokenAssertion))) == .refused(.clientDataMismatch))
            #expect(try await setup.proofs.verify(Self.proof("aa1.nokey", Self.signed(key, challenge: challenge))) == .refused(.keyUnknown))
            let stranger = SimulatedAppAttestKey(appID: appID, environment: .production, validationCategory: nil, bundleVersion: nil, deviceID: nil)
            let strangerArtifact = AppAttestArtifact.value(forKeyID: stranger.keyID.base64EncodedString())
            #expect(try await setup.proofs.verify(Self.proof(strangerArtifact, Self.signed(stranger, challenge: challenge))) == .refused(.keyUnknown))
            // Only the RP ID mismatch was signed by the key (after the signature): the forgeries left no audit event.
            #expect(try await refusals(setup.ledger).map { $0.reason ?? "" } == ["rp_id_mismatch"])
            #expect(try await setup.service.revoke(keyID: key.keyID.base64EncodedString(), reason: "stolen", audit: AuditEvent(client: "test", action: .appAttestRevoke, subject: key.keyID.base64EncodedString(), result: .ok)))
            #expect(try await setup.proofs.verify(Self.proof(artifact, Self.signed(key, challenge: challenge))) == .refused(.keyRevoked))
        }
    }

    @Test func theRiskPolicyRefusesOverItsMaximumAndAnUnknownMetricPastItsGrace() async throws {
        // An hour later than the attestation: past a grace of a minute.
        try await withProofs(risk: RiskMetricPolicy(maxMetric: 2, action: .refuse, unknownGrace: 60), later: 3_600) { setup in
            let (unknown, unknownArtifact) = try await attested(setup)
            let challenge = try await setup.proofs.challenge().value
            #expect(try await setup.proofs.verify(Self.proof(unknownArtifact, Self.signed(unknown, challenge: challenge))) == .refused(.riskMetricUnknown))
            let (farm, farmArtifact) = try await attested(setup)
            let farmID = farm.keyID.base64EncodedString()
            let receipt = try #require(try await setup.ledger.appAttestKey(id: farmID)).receipt
            #expect(try await setup.ledger.storeAttestationReceipt(keyID: farmID, receipt: receipt, riskMetric: 3, notBefore: nil,
                                                                   expiration: Date().addingTimeInterval(86_400), now: Date()))
            #expect(try await setup.proofs.verify(Self.proof(farmArtifact, Self.signed(farm, challenge: challenge))) == .refused(.riskMetricExceeded))
            #expect(try await setup.ledger.storeAttestationReceipt(keyID: farmID, receipt: receipt, riskMetric: 2, notBefore: nil,
                                                                   expiration: Date().addingTimeInterval(86_400), now: Date()))
            // At the maximum it passes, and the verdict carries the metric; the refusals above used nothing.
            #expect(try await setup.proofs.verify(Self.proof(farmArtifact, Self.signed(farm, challenge: challenge)))
                    == .valid(ProvenRequest(artifact: farmArtifact, counter: 2, riskMetric: 2, installID: nil)))
            #expect(try await refusals(setup.ledger).map { $0.reason ?? "" } == ["risk_metric_exceeded", "risk_metric_unknown"])
        }
    }

    @Test func theDevicesBansHoldAndAppleDownGivesNoVerdict() async throws {
        try await withProofs(requireDeviceToken: true) { setup in
            let (key, artifact) = try await attested(setup)
            let challenge = try await setup.proofs.challenge().value
            let signed = Self.signed(key, challenge: challenge)
            #expect(try await setup.proofs.verify(Self.proof(artifact, signed)) == .refused(.deviceTokenRequired))
            #expect(try await setup.proofs.verify(Self.proof(artifact, signed, deviceToken: BanningApple.banned)) == .refused(.deviceBanned))
            #expect(try await setup.proofs.verify(Self.proof(artifact, signed, deviceToken: BanningApple.refused)) == .refused(.invalidDeviceToken))
            var unanswered: RequestProofError?
            do throws(RequestProofError) {
                _ = try await setup.proofs.verify(Self.proof(artifact, signed, deviceToken: BanningApple.down))
            } catch { unanswered = error }
            let appleDown = if case .policy(.apple(.unavailable)) = unanswered { true } else { false }
            #expect(appleDown, "\(String(describing: unanswered))")
            #expect(setup.events.verdicts.withLock { $0 }.suffix(1) == ["unanswered"])
            // None of it used the challenge or moved the counter: the clear device's proof passes.
            guard case .valid(let proven) = try await setup.proofs.verify(Self.proof(artifact, signed, deviceToken: BanningApple.clear)) else {
                Issue.record("the clear device's proof was refused")
                return
            }
            #expect(proven.counter == 1)
        }
    }

    @Test func ofTwoVerificationsOfOneProofAtOnceOneIsValid() async throws {
        try await withProofs { setup in
            let (key, artifact) = try await attested(setup)
            for _ in 0..<10 {
                let challenge = try await setup.proofs.challenge().value
                let proof = Self.proof(artifact, Self.signed(key, challenge: challenge))
                async let first = setup.proofs.verify(proof)
                async let second = setup.proofs.verify(proof)
                let verdicts = try await [first, second]
                let valid = verdicts.filter { if case .valid = $0 { return true } else { return false } }
                let others = verdicts.filter { if case .refused = $0 { return true } else { return false } }
                #expect(valid.count == 1 && others.count == 1, "\(verdicts)")
                // The loser lost at the challenge or at the counter, whichever the winner had written when it read.
                #expect(others.allSatisfy { $0 == .refused(.challengeUnknownOrUsed) || $0 == .refused(.counterNotIncreasing) }, "\(verdicts)")
            }
        }
    }
}
