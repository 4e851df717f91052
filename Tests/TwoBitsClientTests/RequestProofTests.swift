import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import TestSupport
import TwoBitsClient

/// Request proofs from the client against a real TwoBits service and the sandbox's simulated iPhones: the
/// device signs, the test plays the main API and asks the real verify endpoint with what it received.
@Suite(.serialized) struct RequestProofTests {
    static let path = "/v1/payouts?x=1"
    // Computed, not stored: a static Data's buffer outlives the run and LeakSanitizer reports it at exit.
    static var body: Data { Data(#"{"amount":100,"currency":"EUR","to":"acct-42"}"#.utf8) }

    @Test func aSignedRequestIsValidOnceAndItsKeyAttestedFirst() async throws {
        try await withClientHarness { h in
            let device = try await Device(h)
            let proof = try await device.client.proof(method: "POST", path: Self.path, body: Self.body)
            #expect(device.relay.calls("attest") == 1 && device.appAttest.calls(.generateKey) == 1)
            #expect(device.relay.sentChallenges.last?.purpose == .requestProof)
            #expect(proof.headers.keys.sorted() == ["TwoBits-Proof-Assertion", "TwoBits-Proof-Client-Data", "TwoBits-Proof-Key"])
            let members = try JSONSerialization.jsonObject(with: proof.clientData) as! [String: String]
            #expect(Set(members.keys) == ["challenge", "method", "path", "body_sha256"])

            let verdict = try await h.verifyProof(proof.headers, method: "POST", path: Self.path, body: Self.body)
            #expect(verdict["valid"] as? Bool == true && verdict["artifact"] as? String == proof.artifact && verdict["counter"] as? Int == 1, "\(verdict)")
            let replayed = try await h.verifyProof(proof.headers, method: "POST", path: Self.path, body: Self.body)
            #expect(replayed["valid"] as? Bool == false && replayed["reason"] as? String == "counter_not_increasing", "\(replayed)")

            // The key's next proof goes on from there; a token assertion in between keeps the order.
            _ = try await device.client.token(for: .strong, limitedUse: true)
            let next = try await device.client.proof(method: "DELETE", path: "/v1/devices/7")
            let nextVerdict = try await h.verifyProof(next.headers, method: "DELETE", path: "/v1/devices/7", body: Data())
            #expect(nextVerdict["valid"] as? Bool == true && nextVerdict["counter"] as? Int == 3, "\(nextVerdict)")
            #expect(device.relay.calls("attest") == 1)
        }
    }

    @Test func aBodyChangedByOneByteIsRefusedAndTheSignedOneStillServed() async throws {
        try await withClientHarness { h in
            let device = try await Device(h)
            let proof = try await device.client.proof(method: "POST", path: Self.path, body: Self.body)
            var tampered = Self.body
            tampered[tampered.firstIndex(of: UInt8(ascii: "1"))!] = UInt8(ascii: "9")
            let refused = try await h.verifyProof(proof.headers, method: "POST", path: Self.path, body: tampered)
            #expect(refused["valid"] as? Bool == false && refused["reason"] as? String == "payload_mismatch", "\(refused)")
            let moved = try await h.verifyProof(proof.headers, method: "POST", path: "/v1/payouts?x=2", body: Self.body)
            #expect(moved["reason"] as? String == "path_mismatch", "\(moved)")
            let verdict = try await h.verifyProof(proof.headers, method: "POST", path: Self.path, body: Self.body)
            #expect(verdict["valid"] as? Bool == true, "\(verdict)")
        }
    }

    @Test func aDeviceWithoutAppAttestGetsTheTypedErrorAndNoFallback() async throws {
        try await withClientHarness { h in
            let device = try await Device(h, appAttestSupported: false)
            await #expect(throws: TwoBitsClientError.requestProofUnavailable(.unsupported)) {
                _ = try await device.client.proof(method: "POST", path: Self.path, body: Self.body)
            }
            #expect(device.relay.calls("exchange") == 0 && device.relay.calls("challenge") == 0)
            #expect(device.appAttest.calls(.generateKey) == 0)
        }
        // An install outside the rollout cannot attest its key: no proof either, and still no exchange.
        try await withClientHarness(appAttestFields: #""rollout":0"#) { h in
            let device = try await Device(h)
            await #expect(throws: TwoBitsClientError.requestProofUnavailable(.notEnrolled)) {
                _ = try await device.client.proof(method: "POST", path: Self.path, body: Self.body)
            }
            #expect(device.relay.calls("exchange") == 0)
        }
    }

    @Test func aURLRequestIsSignedAsItGoesOnTheWire() async throws {
        try await withClientHarness { h in
            let device = try await Device(h)
            var request = URLRequest(url: URL(string: "https://api.example.com/v1/notes/a%20b?tag=x%2By&n=1")!)
            request.httpMethod = "PUT"
            request.httpBody = Self.body
            try await device.client.sign(&request)
            // Read back as the main API would, by name whatever the case.
            var headers: [String: String] = [:]
            for name in ["TwoBits-Proof-Key", "TwoBits-Proof-Client-Data", "TwoBits-Proof-Assertion"] {
                headers[name] = request.value(forHTTPHeaderField: name.lowercased())
            }
            let verdict = try await h.verifyProof(headers, method: "PUT", path: "/v1/notes/a%20b?tag=x%2By&n=1", body: Self.body)
            #expect(verdict["valid"] as? Bool == true, "\(verdict)")

            var stream = URLRequest(url: URL(string: "https://api.example.com/v1/upload")!)
            stream.httpBodyStream = InputStream(data: Self.body)
            await #expect(throws: TwoBitsClientError.unsignableRequest("a body stream cannot be hashed before it is sent")) {
                try await device.client.sign(&stream)
            }
        }
    }

    @Test func aPrefetchedChallengeServesOneProofAndIsDiscardedOnceExpired() async throws {
        try await withClientHarness { h in
            let clock = TestClock()
            let device = try await Device(h, clock: clock)
            _ = try await device.client.token(for: .strong, limitedUse: true)
            await device.client.prefetchProofChallenge()
            let prefetched = try #require(device.relay.answeredChallenges.last?.challenge)
            let challengesBefore = device.relay.calls("challenge")
            let proof = try await device.client.proof(method: "POST", path: Self.path, body: Self.body)
            #expect(device.relay.calls("challenge") == challengesBefore)
            let members = try JSONSerialization.jsonObject(with: proof.clientData) as! [String: String]
            #expect(members["challenge"] == prefetched)
            #expect(try await h.verifyProof(proof.headers, method: "POST", path: Self.path, body: Self.body)["valid"] as? Bool == true)

            // Used once: the next proof fetches its own. An expired one is never used.
            await device.client.prefetchProofChallenge()
            let stale = try #require(device.relay.answeredChallenges.last?.challenge)
            clock.advance(by: 300)
            let later = try await device.client.proof(method: "POST", path: Self.path, body: Self.body)
            let laterMembers = try JSONSerialization.jsonObject(with: later.clientData) as! [String: String]
            #expect(laterMembers["challenge"] != stale && laterMembers["challenge"] != prefetched)
            #expect(try await h.verifyProof(later.headers, method: "POST", path: Self.path, body: Self.body)["valid"] as? Bool == true)
        }
    }

    @Test func aRequestSentThroughTheQueueStaysAheadOfTheKeysTokens() async throws {
        try await withClientHarness { h in
            let device = try await Device(h)
            _ = try await device.client.token(for: .strong, limitedUse: true)
            // Signed alone and a token asked before the request arrives: the token's assertion moved the counter.
            let early = try await device.client.proof(method: "POST", path: Self.path, body: Self.body)
            _ = try await device.client.token(for: .strong, limitedUse: true)
            let stale = try await h.verifyProof(early.headers, method: "POST", path: Self.path, body: Self.body)
            #expect(stale["reason"] as? String == "counter_not_increasing", "\(stale)")

            // Sent through the queue: a token asked while the request is on its way waits for it to arrive.
            var request = URLRequest(url: URL(string: "https://api.example.com" + Self.path)!)
            request.httpMethod = "POST"
            request.httpBody = Self.body
            let meanwhile = TokenBox()
            let verdict = try await device.client.send(request) { signed in
                meanwhile.task = Task { try await device.client.token(for: .strong, limitedUse: true).tier.rawValue }
                // Time enough for the token's two calls, were the queue not held.
                try await Task.sleep(for: .milliseconds(400))
                var headers: [String: String] = [:]
                for name in ["TwoBits-Proof-Key", "TwoBits-Proof-Client-Data", "TwoBits-Proof-Assertion"] {
                    headers[name] = signed.value(forHTTPHeaderField: name)
                }
                let verdict = try await h.verifyProof(headers, method: "POST", path: Self.path, body: Self.body)
                return verdict["valid"] as? Bool == true ? "valid" : "\(verdict)"
            }
            #expect(verdict == "valid")
            #expect(try await meanwhile.task?.value == "appattest")
        }
    }
}

/// The token task started inside `send`'s closure, read after it returned.
private final class TokenBox: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Task<String, any Error>?
    var task: Task<String, any Error>? {
        get { lock.withLock { stored } }
        set { lock.withLock { stored = newValue } }
    }
}
