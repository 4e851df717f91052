import AppleDeviceCheckClient
import DeviceCheckModel
import Foundation
import Sandbox
import TestSupport
import Testing
import TwoBitsCrypto

/// 429, 5xx, timeouts, dropped connections and garbage: retried inside the deadline, then a typed
/// `.unavailable` — never read as an answer.
@Suite struct TransientFailureTests {
    @Test func twoServiceUnavailableAnswersAreRetriedAndTheCallSucceeds() async throws {
        try await withSandbox { h in
            let observer = RecordingObserver()
            let client = try h.client(observer: observer)
            h.sandbox.inject(Fault(kind: .status, status: 503, count: 2))
            try await client.validate(try h.token(h.device()))
            #expect(h.calls(.validate) == 3)
            #expect(h.statusCount(503) == 2)
            #expect(h.statusCount(200) == 1)
            #expect(observer.outcomes == ["server_error", "server_error", "ok"])
        }
    }

    @Test(arguments: [(429, "throttled"), (500, "server_error"), (502, "server_error"), (504, "server_error")])
    func transientStatusesAreRetried(status: Int, label: String) async throws {
        try await withSandbox { h in
            let observer = RecordingObserver()
            let client = try h.client(observer: observer)
            h.sandbox.inject(Fault(kind: .status, status: status, count: 2))
            let device = h.device()
            try await client.update(try h.token(device), bits: Bits(bit0: false, bit1: true))
            #expect(observer.outcomes == [label, label, "ok"])
            #expect(h.sandbox.device(device)?.bits == Bits(bit0: false, bit1: true))
        }
    }

    @Test func endlessThrottlingEndsAsThrottledWithinTheDeadline() async throws {
        try await withSandbox { h in
            let timeout = 1_500
            let observer = RecordingObserver()
            let client = try h.client(timeoutMilliseconds: timeout, observer: observer)
            h.sandbox.inject(Fault(kind: .status, status: 429, count: 1_000))
            let token = try h.token(h.device())
            let probe = StarvationProbe()
            let start = ContinuousClock.now
            let result = await outcome { () async throws(DeviceCheckError) in try await client.validate(token) }
            let elapsed = milliseconds(since: start)
            expectEnds(result, label: "throttled", observer: observer) { $0 == .throttled }
            noteElapsed(elapsed, below: timeout + 500, probe: probe, "endless throttling [\(observer.summary)]")
            // (That 429 is retried at all is shown exactly by transientStatusesAreRetried.)
        }
    }

    /// Apple answers every attempt, slowly, with 429: the call must surface `.throttled`, the only thing
    /// Apple ever said, although the deadline (1 s, with 400 ms answers) leaves no room for a third whole
    /// attempt. Regression test: the client used to start a final retry with as little as 20 ms left and
    /// then report that retry's `.timedOut`.
    @Test
    func slowThrottlingStillEndsAsThrottled() async throws {
        try await withSandbox { h in
            // Warm up without latency first: the first seconds of a full test run are the busiest.
            let warmUp = try h.client(timeoutMilliseconds: 10_000)
            try await warmUp.validate(try h.token(h.device()))
            h.sandbox.setLatency(milliseconds: 400)
            let observer = RecordingObserver()
            let client = try h.client(timeoutMilliseconds: 1_000, observer: observer)
            h.sandbox.inject(Fault(kind: .status, status: 429, count: 1_000))
            let token = try h.token(h.device())
            let result = await outcome { () async throws(DeviceCheckError) in try await client.validate(token) }
            expectEnds(result, label: "throttled", observer: observer) { $0 == .throttled }
        }
    }

    @Test func endlessServerErrorsEndAsServerError() async throws {
        try await withSandbox { h in
            let observer = RecordingObserver()
            let client = try h.client(timeoutMilliseconds: 1_500, observer: observer)
            h.sandbox.inject(Fault(kind: .status, status: 500, count: 1_000))
            let token = try h.token(h.device())
            let result = await outcome { () async throws(DeviceCheckError) in try await client.update(token, bits: .clear) }
            expectEnds(result, label: "server_error", observer: observer) { $0 == .serverError(500) }
        }
    }

    @Test func aHangingAppleEndsAsTimedOutAtTheDeadline() async throws {
        try await withSandbox { h in
            let timeout = 300
            let observer = RecordingObserver()
            let client = try h.client(timeoutMilliseconds: timeout, observer: observer)
            h.sandbox.inject(Fault(kind: .timeout, count: 1_000, delayMilliseconds: 5_000))
            let token = try h.token(h.device())
            let probe = StarvationProbe()
            let start = ContinuousClock.now
            let result = await outcome { () async throws(DeviceCheckError) in try await client.query(token) }
            let elapsed = milliseconds(since: start)
            #expect(result.failure == .unavailable(.timedOut))
            noteElapsed(elapsed, below: timeout + 1_500, probe: probe, "a call against a 5 s hang [\(observer.summary)]")
        }
    }

    @Test func oneDroppedConnectionIsRetried() async throws {
        try await withSandbox { h in
            let client = try h.client()
            h.sandbox.inject(Fault(kind: .drop, count: 1))
            let device = h.device()
            try await client.update(try h.token(device), bits: Bits(bit0: true, bit1: false))
            #expect(h.sandbox.device(device)?.bits == Bits(bit0: true, bit1: false))
        }
    }

    @Test func connectionsDroppedForeverEndAsConnectionFailed() async throws {
        try await withSandbox { h in
            let timeout = 1_500
            let observer = RecordingObserver()
            let client = try h.client(timeoutMilliseconds: timeout, observer: observer)
            h.sandbox.inject(Fault(kind: .drop, count: 100_000))
            let token = try h.token(h.device())
            let probe = StarvationProbe()
            let start = ContinuousClock.now
            let result = await outcome { () async throws(DeviceCheckError) in try await client.validate(token) }
            let elapsed = milliseconds(since: start)
            expectEnds(result, label: "connection_failed", observer: observer) { failure in
                if case .connectionFailed(let message) = failure { return !message.isEmpty }
                return false
            }
            noteElapsed(elapsed, below: timeout + 1_500, probe: probe, "endless dropped connections [\(observer.summary)]")
        }
    }

    @Test func garbageIn200ToAQueryIsUnparseableNeverNeverSet() async throws {
        try await withSandbox { h in
            let observer = RecordingObserver()
            let client = try h.client(timeoutMilliseconds: 1_500, observer: observer)
            h.sandbox.inject(Fault(kind: .status, status: 200, body: "garbage", count: 1_000, endpoint: "query_two_bits"))
            let token = try h.token(h.device())
            let result = await outcome { () async throws(DeviceCheckError) in try await client.query(token) }
            #expect(result.failure != nil, "never .neverSet, never a state")
            expectEnds(result, label: "unparseable", observer: observer) { if case .unparseable = $0 { return true }; return false }
        }
    }

    /// Each unrecognised 200 is classified `unparseable` and retried — never read as "never set" — and the
    /// call then gets the sandbox's true answer.
    @Test(arguments: ["", "{}", #"{"bit0":true,"bit1":false}"#, #"{"bit0":"true","bit1":false,"last_update_time":"2026-01"}"#,
                      #"{"bit0":true,"bit1":false,"last_update_time":"2026-13"}"#, #"{"bit0":1,"bit1":0,"last_update_time":"2026-01"}"#,
                      "<html>Failed to find bit state</html>", "Failed to find bit state, maybe"])
    func anyUnrecognised200ToAQueryIsUnparseableAndRetried(_ body: String) async throws {
        try await withSandbox { h in
            let observer = RecordingObserver()
            let client = try h.client(observer: observer)
            h.sandbox.inject(Fault(kind: .status, status: 200, body: body, count: 2, endpoint: "query_two_bits"))
            let device = h.device()
            let month = try #require(YearMonth(year: 2025, month: 7))
            h.sandbox.seed(device, bits: Bits(bit0: true, bit1: false), lastUpdated: month)
            let result = try await client.query(try h.token(device))
            #expect(result == .state(BitState(bits: Bits(bit0: true, bit1: false), lastUpdated: month)))
            #expect(observer.outcomes == ["unparseable", "unparseable", "ok"], "body \(body)")
        }
    }

    @Test func faultsLimitedToOneEndpointLeaveTheOthersAlone() async throws {
        try await withSandbox { h in
            let client = try h.client()
            h.sandbox.inject(Fault(kind: .status, status: 200, body: "garbage", count: 1_000, endpoint: "query_two_bits"))
            let device = h.device()
            try await client.validate(try h.token(device))
            try await client.update(try h.token(device), bits: Bits(bit0: true, bit1: true))
        }
    }

    /// Six concurrent calls against a cap of two, each answer taking 300 ms, with a 400 ms deadline.
    static func overloadRound(_ h: SandboxHarness, client: AppleDeviceCheckClient, timeout: Int) async throws -> (results: [Result<Void, DeviceCheckError>], elapsed: Int) {
        let device = h.device()
        let tokens = try (0..<6).map { _ in try h.token(device) }
        let start = ContinuousClock.now
        let results = await withTaskGroup(of: Result<Void, DeviceCheckError>.self) { group in
            for token in tokens {
                group.addTask { await outcome { () async throws(DeviceCheckError) in try await client.validate(token) } }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        return (results, milliseconds(since: start))
    }

    @Test func maxInFlightShedsLoadInsteadOfHanging() async throws {
        try await withSandbox { h in
            let timeout = 400
            let client = try h.client(timeoutMilliseconds: timeout, maxInFlight: 2)
            // Warm up first: see coldClientRunsConcurrentCallsInParallel for why.
            // (Its outcome does not matter; under load it may even time out.)
            let warmUp = try h.token(h.device())
            _ = await outcome { () async throws(DeviceCheckError) in try await client.validate(warmUp) }
            h.sandbox.setLatency(milliseconds: 300)

            let probe = StarvationProbe()
            let (results, elapsed) = try await Self.overloadRound(h, client: client, timeout: timeout)
            #expect(results.count == 6)
            // Every call has a 400 ms deadline; a hang would be unbounded. (Generous: the whole test process may be busy.)
            noteElapsed(elapsed, below: timeout + 1_600, probe: probe, "six calls against a cap of two")
            let succeeded = results.filter { $0.failure == nil }.count
            let unexpected = results.compactMap(\.failure).filter { $0 != .unavailable(.overloaded) && $0 != .unavailable(.timedOut) }
            // At most two calls can have had a slot for the 300 ms an answer takes; the rest failed fast and typed.
            #expect(succeeded <= 2, "results: \(results)")
            #expect(unexpected.isEmpty, "unexpected failures: \(unexpected)")
        }
    }

    /// The calls still queued when their deadline passes fail as `.overloaded`. Regression test: a queued
    /// call handed a slot at (or just after) its deadline used to send a doomed 1 ms request and report
    /// `.timedOut`, so whether any call said `.overloaded` was a race (lost in about 1 round in 5).
    @Test
    func callsStillQueuedAtTheirDeadlineFailAsOverloaded() async throws {
        try await withSandbox { h in
            let timeout = 400
            // Eight independent rounds at once (one client each): the old race was lost in most runs.
            var clients: [AppleDeviceCheckClient] = []
            for _ in 0..<8 {
                let client = try h.client(timeoutMilliseconds: timeout, maxInFlight: 2)
                let warmUp = try h.token(h.device())
                _ = await outcome { () async throws(DeviceCheckError) in try await client.validate(warmUp) }
                clients.append(client)
            }
            h.sandbox.setLatency(milliseconds: 300)
            let rounds = try await withThrowingTaskGroup(of: [Result<Void, DeviceCheckError>].self) { group in
                for client in clients {
                    group.addTask { try await Self.overloadRound(h, client: client, timeout: timeout).results }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            for results in rounds {
                let overloaded = results.filter { $0.failure == .unavailable(.overloaded) }.count
                #expect(overloaded >= 1, "results: \(results)")
            }
        }
    }

    /// A fresh client's first burst of calls does not wait for one another. Regression test: with
    /// CURLOPT_PIPEWAIT on plain-HTTP/1.1 requests, curl held every request of a cold client until the first
    /// response showed the connection could not multiplex. The sandbox counts the calls it serves at once.
    @Test
    func coldClientRunsConcurrentCallsInParallel() async throws {
        try await withSandbox(latencyMilliseconds: 500) { h in
            let client = try h.client()
            let device = h.device()
            let tokens = try (0..<4).map { _ in try h.token(device) }
            let failures = await withTaskGroup(of: Int.self) { group in
                for token in tokens { group.addTask { (try? await client.validate(token)) == nil ? 1 : 0 } }
                return await group.reduce(0, +)
            }
            #expect(failures == 0)
            #expect(h.calls(.validate) == 4)
            #expect(h.sandbox.counters.maxConcurrentCalls == 4, "the 4 calls were not in flight together")
        }
    }
}

extension Result {
    var failure: Failure? { if case .failure(let f) = self { return f }; return nil }
}
