import Foundation
import Glibc
import Testing
import TestSupport
import TwoBitsClient

/// The library's reference relay, `URLSessionRelay`, over real HTTP on loopback: pointed straight at a live
/// TwoBits (a main API that forwards TwoBits' own paths unchanged, adding the key as its header), it carries the
/// whole flow, and hands refusals, silence and foreign answers back as `RelayFailure` says.
@Suite(.serialized) struct URLSessionRelayTests {
    func relay(_ h: ClientHarness, key: String? = nil, paths: RelayPaths = RelayPaths(), binding: String? = nil) -> URLSessionRelay {
        let bearer = "Bearer " + (key ?? h.keys["mainapi"]!)
        return URLSessionRelay(baseURL: h.base, paths: paths, headers: { ["Authorization": bearer] }, binding: { binding }, timeout: 10)
    }

    @Test func carriesTheStrongFlowAndTheFallbackExchange() async throws {
        try await withClientHarness { h in
            let relay = relay(h, binding: "session-1")
            #expect(await relay.sessionBinding() == "session-1")
            let bare = try await relay.challenge()
            #expect(bare.challenge.count == 43 && bare.expiresIn > 0 && bare.enroll == true)

            let device = try await Device(h, relay: relay)
            let attested = try await device.client.token(for: .strong, limitedUse: true)
            #expect(attested.tier == .appattest && claims(attested)["sub"] as? String == "ios-test-install")
            let asserted = try await device.client.token(for: .strong, limitedUse: true)
            #expect(asserted.tier == .appattest && asserted.value != attested.value)
            #expect(device.relay.calls("attest") == 1 && device.relay.calls("assert") == 1)

            let fallback = try await Device(h, appAttestSupported: false, relay: relay)
            let token = try await fallback.client.token(for: .any)
            #expect(token.tier == .devicecheck && token.appAttestStatus == .unsupported)
            #expect(try await h.verify(token, binding: nil)["valid"] as? Bool == true)
        }
    }

    @Test func aRefusalCarriesTwoBitsStatusAndCode() async throws {
        try await withClientHarness { h in
            await #expect(throws: RelayFailure.refused(status: 401, code: "unauthorized")) {
                try await relay(h, key: "not-a-key").challenge()
            }
            // A 404 from a path TwoBits does not serve: its envelope's code, passed through.
            let wrongPath = relay(h, paths: RelayPaths(challenge: "v1/no-such-path"))
            let refusal = await #expect(throws: RelayFailure.self) { try await wrongPath.challenge() }
            guard case .refused(let status, _, _, _)? = refusal else { Issue.record("\(String(describing: refusal))"); return }
            #expect(status == 404)
        }
    }

    @Test func anAnswerOfAnotherShapeIsMalformed() async throws {
        try await withClientHarness { h in
            // The exchange posted where challenges are issued: 201 with a challenge, not a token.
            let misrouted = relay(h, paths: RelayPaths(fallbackExchange: "v1/app-attest/challenges"))
            let failure = await #expect(throws: RelayFailure.self) {
                try await misrouted.exchange(FallbackExchangeRequest(installID: "ios-test-install"))
            }
            guard case .malformedAnswer(let detail)? = failure else { Issue.record("\(String(describing: failure))"); return }
            #expect(detail.hasPrefix("TokenAnswer"))
        }
    }

    @Test func theClientNamesEachRelayFailureOfTheExchange() async throws {
        try await withClientHarness { h in
            let unauthorized = try await Device(h, appAttestSupported: false, relay: relay(h, key: "not-a-key"))
            await #expect(throws: TwoBitsClientError.refused(status: 401, code: "unauthorized", reason: nil)) {
                try await unauthorized.client.token(for: .any)
            }
            // A relay pointed at another service that answers 201 with something else (here the sandbox's new device).
            let elsewhere = URLSessionRelay(baseURL: h.sandboxURL, paths: RelayPaths(fallbackExchange: "sandbox/v1/devices"), timeout: 10)
            let misrouted = try await Device(h, appAttestSupported: false, relay: elsewhere)
            let failure = await #expect(throws: TwoBitsClientError.self) { try await misrouted.client.token(for: .any) }
            guard case .malformedAnswer? = failure else { Issue.record("\(String(describing: failure))"); return }
        }
    }

    @Test func clearCacheForgetsTheCachedToken() async throws {
        try await withClientHarness { h in
            let device = try await Device(h, appAttestSupported: false, relay: relay(h))
            let first = try await device.client.token(for: .any)
            #expect(try await device.client.token(for: .any) == first && device.relay.calls("exchange") == 1)
            await device.client.clearCache()
            let fresh = try await device.client.token(for: .any)
            #expect(fresh.value != first.value && device.relay.calls("exchange") == 2)
        }
    }

    @Test func noServerIsUnreachable() async throws {
        // A port bound but not listening: connecting is refused, and no other test can take it meanwhile.
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        inet_pton(AF_INET, "127.0.0.1", &address.sin_addr)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        try #require(bound)
        let port = UInt16(bigEndian: address.sin_port)
        let relay = URLSessionRelay(baseURL: URL(string: "http://127.0.0.1:\(port)/")!, timeout: 5)
        let failure = await #expect(throws: RelayFailure.self) { try await relay.challenge() }
        guard case .unreachable? = failure else { Issue.record("\(String(describing: failure))"); return }
        // The client says network, not a refusal: the app retries when online.
        try await withClientHarness { h in
            let offline = try await Device(h, appAttestSupported: false, relay: relay)
            let error = await #expect(throws: TwoBitsClientError.self) { try await offline.client.token(for: .any) }
            guard case .network? = error else { Issue.record("\(String(describing: error))"); return }
        }
    }
}

/// A relay written against the first `TwoBitsRelay` (the four calls only, no `challenge(_:)`, no `sessionBinding()`)
/// that maps its main API's answers into the library's answer types with their public initialisers, as a relay
/// whose main API answers in its own JSON shape would.
final class FourCallRelay: TwoBitsRelay, @unchecked Sendable {
    private let inner: URLSessionRelay
    private let lock = NSLock()
    private var bareChallenges = 0

    init(_ inner: URLSessionRelay) { self.inner = inner }

    var challengesAsked: Int { lock.withLock { bareChallenges } }

    func challenge() async throws -> ChallengeAnswer {
        lock.withLock { bareChallenges += 1 }
        let answer = try await inner.challenge()
        return ChallengeAnswer(challenge: answer.challenge, expiresIn: answer.expiresIn, enroll: answer.enroll)
    }

    func attest(_ request: AttestationRequest) async throws -> TokenAnswer { mapped(try await inner.attest(request)) }
    func assert(_ request: AssertionRequest) async throws -> TokenAnswer { mapped(try await inner.assert(request)) }
    func exchange(_ request: FallbackExchangeRequest) async throws -> TokenAnswer { mapped(try await inner.exchange(request)) }

    private func mapped(_ answer: TokenAnswer) -> TokenAnswer {
        TokenAnswer(token: answer.token, tier: answer.tier, expiresIn: answer.expiresIn, artifact: answer.artifact, counter: answer.counter)
    }
}

extension URLSessionRelayTests {
    /// The protocol's defaults keep such a relay working: the client's challenge with a body reaches its
    /// `challenge()`, and it binds no session (tokens cached under none).
    @Test func aRelayOfTheFourFirstCallsStillCarriesTheFlow() async throws {
        try await withClientHarness { h in
            let fourCalls = FourCallRelay(relay(h, binding: "ignored: the four-call relay does not forward it"))
            #expect(await fourCalls.sessionBinding() == nil)
            let device = try await Device(h, relay: fourCalls)
            let attested = try await device.client.token(for: .strong, limitedUse: true)
            let asserted = try await device.client.token(for: .strong, limitedUse: true)
            #expect(attested.tier == .appattest && asserted.tier == .appattest && asserted.value != attested.value)
            #expect(fourCalls.challengesAsked == 2 && device.relay.calls("challenge") == 2)
            let key = try #require(await device.keyStore.load())
            let shown = try await h.admin("GET", "v1/admin/app-attest/keys/\(key.artifact!)")
            #expect(shown.status == 200 && shown.json["counter"] as? Int == 1, "\(shown.json)")

            let fallback = try await Device(h, appAttestSupported: false, relay: fourCalls)
            let token = try await fallback.client.token(for: .any)
            let verdict = try await h.verify(token, binding: nil)
            #expect(token.tier == .devicecheck && verdict["valid"] as? Bool == true)
        }
    }
}

extension URLSessionRelayTests {
    /// A request proof's challenge goes through the reference relay with its purpose; a relay of the four first
    /// calls drops the body, and its challenge serves no proof (the main API's verdict says so).
    @Test func aRequestProofsChallengeTravelsWithItsPurpose() async throws {
        try await withClientHarness { h in
            let body = Data(#"{"amount":1}"#.utf8)
            let device = try await Device(h, relay: relay(h))
            let proof = try await device.client.proof(method: "POST", path: "/v1/payouts", body: body)
            let verdict = try await h.verifyProof(proof.headers, method: "POST", path: "/v1/payouts", body: body)
            #expect(verdict["valid"] as? Bool == true, "\(verdict)")

            let old = try await Device(h, relay: FourCallRelay(relay(h)))
            let stale = try await old.client.proof(method: "POST", path: "/v1/payouts", body: body)
            let refused = try await h.verifyProof(stale.headers, method: "POST", path: "/v1/payouts", body: body)
            #expect(refused["reason"] as? String == "challenge_unknown_or_used", "\(refused)")
        }
    }
}
