import Foundation
import Locking
import TestSupport
import Testing
import TwoBitsCrypto
import TwoBitsService

/// A clock tests move by hand, in seconds.
final class ManualClock: Sendable {
    private let time = Lock(1_000.0)
    var now: Double { time.withLock { $0 } }
    func advance(_ seconds: Double) { time.withLock { $0 += seconds } }
    var closure: @Sendable () -> Double { { self.now } }
}

@Suite("Rate limiter")
struct RateLimiterTests {
    @Test func eachClientHasItsOwnBucket() {
        let clock = ManualClock()
        let limiter = RateLimiter(limits: ["a": .init(ratePerSecond: 1, burst: 2), "b": .init(ratePerSecond: 1, burst: 1)],
                                  globalPerSecond: nil, now: clock.closure)
        #expect(limiter.admit(client: "a") == .admitted)
        #expect(limiter.admit(client: "a") == .admitted)
        #expect(limiter.admit(client: "a") == .refused(.client, retryAfterSeconds: 1))
        #expect(limiter.admit(client: "b") == .admitted)
        #expect(limiter.admit(client: "b") == .refused(.client, retryAfterSeconds: 1))
        // A client with no limit configured is never refused.
        for _ in 0..<1_000 { #expect(limiter.admit(client: "unlimited") == .admitted) }
        clock.advance(1)
        #expect(limiter.admit(client: "a") == .admitted)
        #expect(limiter.admit(client: "a") == .refused(.client, retryAfterSeconds: 1))
    }

    @Test func retryAfterIsTheWaitRoundedUp() {
        let clock = ManualClock()
        let limiter = RateLimiter(limits: ["slow": .init(ratePerSecond: 0.25, burst: 1)], globalPerSecond: nil, now: clock.closure)
        #expect(limiter.admit(client: "slow") == .admitted)
        #expect(limiter.admit(client: "slow") == .refused(.client, retryAfterSeconds: 4))
        clock.advance(2.5)
        // 1.5 s left: rounded up to 2.
        #expect(limiter.admit(client: "slow") == .refused(.client, retryAfterSeconds: 2))
        clock.advance(1.4)
        #expect(limiter.admit(client: "slow") == .refused(.client, retryAfterSeconds: 1))
        clock.advance(0.1)
        #expect(limiter.admit(client: "slow") == .admitted)
    }

    @Test func theGlobalCeilingIsSharedAndChargedPerAppleCall() {
        let clock = ManualClock()
        let limiter = RateLimiter(limits: [:], globalPerSecond: 5, now: clock.closure)
        #expect(limiter.admit(client: "a", globalCost: 3) == .admitted)
        #expect(limiter.admit(client: "b", globalCost: 2) == .admitted)
        #expect(limiter.admit(client: "c", globalCost: 1) == .refused(.global, retryAfterSeconds: 1))
        clock.advance(0.5)
        // Two and a half calls' worth back at 5 per second.
        #expect(limiter.admit(client: "c", globalCost: 2) == .admitted)
        #expect(limiter.admit(client: "a", globalCost: 1) == .refused(.global, retryAfterSeconds: 1))
    }

    @Test func aRefusedRequestTakesNothingFromEitherBucket() {
        let clock = ManualClock()
        let limiter = RateLimiter(limits: ["a": .init(ratePerSecond: 1, burst: 1), "b": .init(ratePerSecond: 100, burst: 100)],
                                  globalPerSecond: 2, now: clock.closure)
        #expect(limiter.admit(client: "b", globalCost: 2) == .admitted)
        // The global bucket refuses a: a's own token must stay.
        #expect(limiter.admit(client: "a") == .refused(.global, retryAfterSeconds: 1))
        clock.advance(1)
        #expect(limiter.admit(client: "a") == .admitted)
        // a's bucket refuses: the global token stays for b.
        #expect(limiter.admit(client: "a") == .refused(.client, retryAfterSeconds: 1))
        #expect(limiter.admit(client: "b") == .admitted)
    }
}

/// The configured limits are the deployment's totals: each replica's buckets hold its share.
@Suite("Rate limits shared by replicas")
struct ReplicaShareTests {
    @Test func sharesRoundWholeNumbersUpAndNeverBelowOne() {
        #expect(LiveReplicas.share(ofCount: 12, replicas: 3) == 4)
        #expect(LiveReplicas.share(ofCount: 10, replicas: 3) == 4)
        #expect(LiveReplicas.share(ofCount: 2, replicas: 5) == 1)
        #expect(LiveReplicas.share(ofCount: 7, replicas: 1) == 7)
        #expect(LiveReplicas.share(ofRate: 6, replicas: 4) == 1.5)
        #expect(LiveReplicas.share(ofRate: 6, replicas: 0) == 6)
        let replicas = LiveReplicas()
        replicas.update(0)
        #expect(replicas.count == 1)
    }

    @Test func aClientsBucketHoldsThisReplicasShareAndFollowsTheCount() {
        let clock = ManualClock()
        let replicas = LiveReplicas(3)
        let limiter = RateLimiter(limits: ["a": .init(ratePerSecond: 6, burst: 6)], globalPerSecond: nil, replicas: replicas, now: clock.closure)
        // A burst of 6 among 3 replicas: 2 here.
        #expect(limiter.admit(client: "a") == .admitted)
        #expect(limiter.admit(client: "a") == .admitted)
        #expect(limiter.admit(client: "a") == .refused(.client, retryAfterSeconds: 1))
        // 6 per second among 3: one token every half second.
        clock.advance(0.5)
        #expect(limiter.admit(client: "a") == .admitted)
        #expect(limiter.admit(client: "a") == .refused(.client, retryAfterSeconds: 1))
        // A replica gone: 3 per second and a burst of 3 each for the two left (from the next request on).
        replicas.update(2)
        #expect(limiter.admit(client: "a") == .refused(.client, retryAfterSeconds: 1))
        clock.advance(1)
        for _ in 0..<3 { #expect(limiter.admit(client: "a") == .admitted) }
        #expect(limiter.admit(client: "a") == .refused(.client, retryAfterSeconds: 1))
        // A replica more: the tokens held shrink to the new share at once.
        clock.advance(10)
        replicas.update(6)
        #expect(limiter.admit(client: "a") == .admitted)
        #expect(limiter.admit(client: "a") == .refused(.client, retryAfterSeconds: 1))
    }

    @Test func theAttestationCapIsTheDeploymentsTotalShared() {
        let clock = ManualClock()
        let replicas = LiveReplicas(4)
        // app_attest.max_attestations_per_second 8 among 4 replicas: a burst of 2 here, 2 a second.
        let cap = AttestationCap(perSecond: 8, replicas: replicas, now: clock.closure)
        var installs = (0...).lazy.map { "install-\($0)" }.makeIterator()
        func admit() -> Bool { cap.admit(installID: installs.next()) }
        #expect(admit())
        #expect(admit())
        #expect(!admit())
        clock.advance(0.5)
        #expect(admit())
        #expect(!admit())
        // Alone now: resized to the whole 8 at the next challenge (what was held stays; refills at 8 a second).
        replicas.update(1)
        #expect(!admit())
        clock.advance(1)
        for _ in 0..<8 { #expect(admit()) }
        #expect(!admit())
    }

    @Test func noOneInstallNorTheAnonymousDrainTheAttestationCap() {
        let clock = ManualClock()
        let cap = AttestationCap(perSecond: 10, replicas: LiveReplicas(1), window: 300, now: clock.closure)
        // One install: twice a window (a retry), however much room is left.
        #expect(cap.admit(installID: "same") && cap.admit(installID: "same"))
        #expect(!cap.admit(installID: "same"))
        clock.advance(299)
        #expect(!cap.admit(installID: "same"), "still inside its window")
        clock.advance(2)
        #expect(cap.admit(installID: "same"), "a new window")
        // Without an install id: half the burst (5 of 10), the rest kept for installs that say who they are.
        clock.advance(10)
        for _ in 0..<5 { #expect(cap.admit(installID: nil)) }
        #expect(!cap.admit(installID: nil))
        for i in 0..<5 { #expect(cap.admit(installID: "honest-\(i)")) }
        #expect(!cap.admit(installID: "honest-5"), "the whole cap is used")
    }

    @Test func theGlobalCeilingIsSharedToo() {
        let clock = ManualClock()
        let replicas = LiveReplicas(2)
        let limiter = RateLimiter(limits: [:], globalPerSecond: 5, replicas: replicas, now: clock.closure)
        // 5 calls per second among 2 replicas: a burst of 3 (rounded up), 2.5 per second.
        #expect(limiter.admit(client: "a", globalCost: 3) == .admitted)
        #expect(limiter.admit(client: "b", globalCost: 1) == .refused(.global, retryAfterSeconds: 1))
        clock.advance(0.5)
        #expect(limiter.admit(client: "b", globalCost: 1) == .admitted)
        #expect(limiter.admit(client: "b", globalCost: 1) == .refused(.global, retryAfterSeconds: 1))
        // Alone now: the whole ceiling, 5 per second and a burst of 5.
        replicas.update(1)
        #expect(limiter.admit(client: "b", globalCost: 1) == .refused(.global, retryAfterSeconds: 1))
        clock.advance(1)
        for _ in 0..<5 { #expect(limiter.admit(client: "b", globalCost: 1) == .admitted) }
        #expect(limiter.admit(client: "b", globalCost: 1) == .refused(.global, retryAfterSeconds: 1))
    }
}

/// 429 before Apple: a refused request never reaches the sandbox.
@Suite("Rate limits over HTTP")
struct RateLimitHTTPTests {
    /// N from the error message's "retry after N s".
    static func retryAfterSeconds(_ message: String?) -> Int? {
        guard let message, let range = message.range(of: "retry after ") else { return nil }
        return Int(message[range.upperBound...].prefix(while: \.isNumber))
    }

    @Test func aClientOverItsRateGets429WithRetryAfterAndAppleSeesNoCall() async throws {
        // One token per 100 s: the burst stays spent however slowly this machine runs the test (under a parallel
        // run a few seconds may pass between requests).
        try await withService(.init(clientFields: ["marketing": #""rate_per_second":0.01,"burst":2"#])) { h in
        let device = h.freshDevice()
        let body = #"{"device_token":"\#(device.token)"}"#
        #expect(try await h.post("/v1/devices/validate", body, key: "marketing").status == 200)
        #expect(try await h.post("/v1/devices/validate", body, key: "marketing").status == 200)
        let queries = h.sandbox.counters.calls["query_two_bits"] ?? 0
        let refused = try await h.post("/v1/devices/validate", body, key: "marketing")
        #expect(refused.status == 429 && refused.code == "rate_limited", "\(refused.text)")
        // One token in 100 s at 0.01 per second, less the time since the burst was spent, rounded up.
        let wait = Self.retryAfterSeconds(refused.json?["error"]?["message"]?.stringValue)
        #expect(wait.map { (90...100).contains($0) } == true, "\(refused.text)")
        #expect(h.sandbox.counters.calls["query_two_bits"] ?? 0 == queries)
        // Other clients are not affected; routes that do not call Apple are not limited.
        #expect(try await h.post("/v1/devices/validate", body, key: "all").status == 200)
        #expect(try await h.request("GET", "/v1/admin/audit", key: "all").status == 200)
        let metrics = try await h.request("GET", "/metrics", key: nil)
        #expect(metrics.text.contains(#"twobits_rate_limited_total{client="marketing",scope="client"} 1"#), "\(metrics.text)")
        }
    }

    @Test func theGlobalCeilingRefusesEveryClientOnceSpent() async throws {
        // One call per second, so a request right after one that spent the second is over the ceiling. A slow
        // machine (a parallel run) may let a second pass between the two: then the pair is tried again, a few times.
        try await withService(.init(apple: ["max_calls_per_second": "1"])) { h in
        let device = h.freshDevice()
        let body = #"{"device_token":"\#(device.token)"}"#
        var queries = 0
        func spendTheSecondThenAsk() async throws -> ServiceHarness.Answer {
            #expect(try await h.post("/v1/devices/validate", body, key: "all").status == 200)
            queries = h.sandbox.counters.calls["query_two_bits"] ?? 0
            return try await h.post("/v1/devices/validate", body, key: "marketing")
        }
        var refused = try await spendTheSecondThenAsk()
        for _ in 0..<4 where refused.status == 200 {
            try await Task.sleep(for: .milliseconds(1_100)) // a full bucket again
            refused = try await spendTheSecondThenAsk()
        }
        #expect(refused.status == 429 && refused.code == "rate_limited", "\(refused.text)")
        #expect(refused.json?["error"]?["message"]?.stringValue?.contains("retry after 1 s") == true, "\(refused.text)")
        #expect(h.sandbox.counters.calls["query_two_bits"] ?? 0 == queries)
        let metrics = try await h.request("GET", "/metrics", key: nil)
        #expect(metrics.text.contains(#"twobits_rate_limited_total{client="marketing",scope="global"} 1"#), "\(metrics.text)")
        }
    }
}
