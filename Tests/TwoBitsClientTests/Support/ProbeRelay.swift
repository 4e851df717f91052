import Foundation
import TwoBitsClient

/// A relay in front of the real one that records what the client sends and how many of its App Attest flows
/// are in flight at once (from a challenge to the attestation or assertion it was for); it can also play a
/// main API that cannot reach TwoBits for the App Attest calls.
final class ProbeRelay: TwoBitsRelay, @unchecked Sendable {
    private let inner: any TwoBitsRelay
    private let lock = NSLock()
    private var inFlight = 0
    private var maxInFlight = 0
    private var counts: [String: Int] = [:]
    private(set) var assertions: [AssertionRequest] = []
    private(set) var challenges: [ChallengeRequest] = []
    private(set) var exchanges: [FallbackExchangeRequest] = []
    var appAttestUnreachable = false
    /// When set, challenges are asked for this install id instead of the app's (an install outside the rollout).
    var challengeInstallID: String?
    private(set) var challengeAnswers: [ChallengeAnswer] = []

    init(_ inner: any TwoBitsRelay) { self.inner = inner }

    var mostInFlight: Int { lock.withLock { maxInFlight } }
    func calls(_ name: String) -> Int { lock.withLock { counts[name, default: 0] } }
    var sentExchanges: [FallbackExchangeRequest] { lock.withLock { exchanges } }
    var sentAssertions: [AssertionRequest] { lock.withLock { assertions } }
    var sentChallenges: [ChallengeRequest] { lock.withLock { challenges } }
    var answeredChallenges: [ChallengeAnswer] { lock.withLock { challengeAnswers } }

    func challenge() async throws -> ChallengeAnswer { try await challenge(ChallengeRequest()) }

    func challenge(_ request: ChallengeRequest) async throws -> ChallengeAnswer {
        lock.withLock {
            challenges.append(request)
            counts["challenge", default: 0] += 1
            inFlight += 1
            maxInFlight = max(maxInFlight, inFlight)
        }
        if lock.withLock({ appAttestUnreachable }) {
            lock.withLock { inFlight -= 1 }
            throw RelayFailure.unreachable("the main API could not reach TwoBits")
        }
        var forwarded = request
        if let replaced = lock.withLock({ challengeInstallID }) { forwarded.installID = replaced }
        let answer = try await inner.challenge(forwarded)
        lock.withLock { challengeAnswers.append(answer) }
        return answer
    }

    func attest(_ request: AttestationRequest) async throws -> TokenAnswer {
        defer { lock.withLock { inFlight -= 1 } }
        lock.withLock { counts["attest", default: 0] += 1 }
        return try await inner.attest(request)
    }

    func assert(_ request: AssertionRequest) async throws -> TokenAnswer {
        defer { lock.withLock { inFlight -= 1 } }
        lock.withLock {
            counts["assert", default: 0] += 1
            assertions.append(request)
        }
        return try await inner.assert(request)
    }

    func sessionBinding() async -> String? { await inner.sessionBinding() }

    func exchange(_ request: FallbackExchangeRequest) async throws -> TokenAnswer {
        lock.withLock {
            counts["exchange", default: 0] += 1
            exchanges.append(request)
        }
        return try await inner.exchange(request)
    }
}
