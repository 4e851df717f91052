import DeviceCheck
import Foundation
import Sandbox
import Testing
import TwoBitsCrypto

/// 429, 5xx, timeouts, dropped connections and garbage: retried inside the deadline, then a typed
/// `.unavailable` — never read as an answer.
@Suite struct TransientFailureTests {
    @Test func twoServiceUnavailableAnswersAreRetriedAndTheCallSucceeds() async throws {
        try await withSandbox { h in
            let client = try h.client(timeoutMilliseconds: 3_000)
            h.sandbox.inject(Fault(kind: .status, status: 503, count: 2))
            try await client.validate(try h.token(h.device()))
            #expect(h.calls(.validate) == 3)
            #expect(h.statusCount(503) == 2)
            #expect(h.statusCount(200) == 1)
        }
    }

    @Test func endlessThrottlingEndsAsThrottledWithinTheDeadline() async throws {
        try await withSandbox { h in
            let timeout = 600
            let client = try h.client(timeoutMilliseconds: timeout)
            h.sandbox.inject(Fault(kind: .status, status: 429, count: 1_000))
            let start = ContinuousClock.now
            let token = try h.token(h.device())
            let result = await outcome { () async throws(DeviceCheckError) in try await client.validate(token) }
            let elapsed = milliseconds(since: start)
            #expect(result.failure == .unavailable(.throttled))
            #expect(elapsed < timeout + 500, "took \(elapsed) ms")
            #expect(h.calls(.validate) > 1, "throttling is retried")
        }
    }

    @Test func endlessServerErrorsEndAsServerError() async throws {
        try await withSandbox { h in
            let client = try h.client(timeoutMilliseconds: 400)
            h.sandbox.inject(Fault(kind: .status, status: 500, count: 1_000))
            let token = try h.token(h.device())
            let result = await outcome { () async throws(DeviceCheckError) in try await client.update(token, bits: .clear) }
            #expect(result.failure == .unavailable(.serverError(500)))
        }
    }

    @Test func aHangingAppleEndsAsTimedOutAtTheDeadline() async throws {
        try await withSandbox { h in
            let timeout = 300
            let client = try h.client(timeoutMilliseconds: timeout)
            h.sandbox.inject(Fault(kind: .timeout, count: 1_000, delayMilliseconds: 5_000))
            let start = ContinuousClock.now
            let token = try h.token(h.device())
            let result = await outcome { () async throws(DeviceCheckError) in try await client.query(token) }
            let elapsed = milliseconds(since: start)
            #expect(result.failure == .unavailable(.timedOut))
            #expect(elapsed < timeout + 300, "took \(elapsed) ms")
        }
    }

    @Test func oneDroppedConnectionIsRetried() async throws {
        try await withSandbox { h in
            let client = try h.client(timeoutMilliseconds: 3_000)
            h.sandbox.inject(Fault(kind: .drop, count: 1))
            let device = h.device()
            try await client.update(try h.token(device), bits: Bits(bit0: true, bit1: false))
            #expect(h.sandbox.device(device)?.bits == Bits(bit0: true, bit1: false))
        }
    }

    @Test func connectionsDroppedForeverEndAsConnectionFailed() async throws {
        try await withSandbox { h in
            let timeout = 500
            let client = try h.client(timeoutMilliseconds: timeout)
            h.sandbox.inject(Fault(kind: .drop, count: 100_000))
            let start = ContinuousClock.now
            let token = try h.token(h.device())
            let result = await outcome { () async throws(DeviceCheckError) in try await client.validate(token) }
            let elapsed = milliseconds(since: start)
            guard case .failure(.unavailable(.connectionFailed(let message))) = result else {
                Issue.record("expected .unavailable(.connectionFailed), got \(result)")
                return
            }
            #expect(!message.isEmpty)
            #expect(elapsed < timeout + 500, "took \(elapsed) ms")
        }
    }

    @Test func garbageIn200ToAQueryIsUnparseableNeverNeverSet() async throws {
        try await withSandbox { h in
            let client = try h.client(timeoutMilliseconds: 400)
            h.sandbox.inject(Fault(kind: .status, status: 200, body: "garbage", count: 1_000, endpoint: "query_two_bits"))
            let token = try h.token(h.device())
            let result = await outcome { () async throws(DeviceCheckError) in try await client.query(token) }
            guard case .failure(.unavailable(.unparseable)) = result else {
                Issue.record("expected .unavailable(.unparseable), got \(result)")
                return
            }
        }
    }

    @Test(arguments: ["", "{}", #"{"bit0":true,"bit1":false}"#, #"{"bit0":"true","bit1":false,"last_update_time":"2026-01"}"#,
                      #"{"bit0":true,"bit1":false,"last_update_time":"2026-13"}"#, "<html>Failed to find bit state</html>"])
    func anyUnrecognised200ToAQueryIsUnparseable(_ body: String) async throws {
        try await withSandbox { h in
            let client = try h.client(timeoutMilliseconds: 250)
            h.sandbox.inject(Fault(kind: .status, status: 200, body: body, count: 1_000, endpoint: "query_two_bits"))
            let token = try h.token(h.device())
            let result = await outcome { () async throws(DeviceCheckError) in try await client.query(token) }
            guard case .failure(.unavailable(.unparseable)) = result else {
                Issue.record("body \(body): expected .unavailable(.unparseable), got \(result)")
                return
            }
        }
    }

    @Test func faultsLimitedToOneEndpointLeaveTheOthersAlone() async throws {
        try await withSandbox { h in
            let client = try h.client(timeoutMilliseconds: 300)
            h.sandbox.inject(Fault(kind: .status, status: 200, body: "garbage", count: 1_000, endpoint: "query_two_bits"))
            let device = h.device()
            try await client.validate(try h.token(device))
            try await client.update(try h.token(device), bits: Bits(bit0: true, bit1: true))
        }
    }

    @Test func maxInFlightShedsLoadInsteadOfHanging() async throws {
        try await withSandbox { h in
            let timeout = 400
            let client = try h.client(timeoutMilliseconds: timeout, maxInFlight: 2)
            let device = h.device()
            // Warm up: the first answer tells curl the sandbox speaks HTTP/1.1, so later calls open connections in parallel.
            try await client.validate(try h.token(device))
            h.sandbox.setLatency(milliseconds: 300)
            let tokens = try (0..<6).map { _ in try h.token(device) }
            let start = ContinuousClock.now
            let results = await withTaskGroup(of: Result<Void, DeviceCheckError>.self) { group in
                for token in tokens {
                    group.addTask { await outcome { () async throws(DeviceCheckError) in try await client.validate(token) } }
                }
                return await group.reduce(into: []) { $0.append($1) }
            }
            let elapsed = milliseconds(since: start)
            #expect(results.count == 6)
            #expect(elapsed < timeout + 500, "took \(elapsed) ms")
            let overloaded = results.filter { $0.failure == .unavailable(.overloaded) }.count
            let succeeded = results.filter { $0.failure == nil }.count
            let other = results.filter {
                guard let f = $0.failure else { return false }
                return f != .unavailable(.overloaded) && f != .unavailable(.timedOut)
            }
            #expect(overloaded >= 1, "results: \(results)")
            #expect(succeeded <= 4, "results: \(results)")
            #expect(other.isEmpty, "unexpected failures: \(other)")
        }
    }
}

extension Result {
    var failure: Failure? { if case .failure(let f) = self { return f }; return nil }
}
