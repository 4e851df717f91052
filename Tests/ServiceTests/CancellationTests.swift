import Foundation
import Testing

/// A request answered by its deadline, or by shutdown, has its task cancelled: its Apple call is taken
/// out of curl, and Apple's update (the one irreversible step) never starts after the client was answered.
@Suite(.serialized) struct CancellationTests {
    /// Claims whose Apple query outlasts the request deadline are answered 503; once the sandbox would
    /// have answered, it has seen no update and the audit trail holds no write.
    @Test func aClaimAnsweredByItsDeadlineNeverWritesToApple() async throws {
        let harness = try await ServiceHarness(apple: ["timeout_ms": "5000"], sandboxLatencyMilliseconds: 1_500) {
            $0.server.requestDeadlineMilliseconds = 300
        }
        let devices = (0..<4).map { _ in harness.freshDevice() }
        let answers = try await withThrowingTaskGroup(of: ServiceHarness.Answer.self) { group in
            for device in devices {
                group.addTask { try await harness.post("/v1/promotions/spring/claim", #"{"device_token":"\#(device.token)"}"#) }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(answers.map(\.status) == [503, 503, 503, 503])
        // Answered by the deadline, not by Apple (said by the message, not by a timing, which a loaded machine stretches).
        #expect(answers.allSatisfy { $0.json?["error"]?["message"]?.stringValue?.contains("did not finish within its deadline") == true },
                "\(answers.map(\.text))")
        // Past the sandbox's latency: a query that had not been cancelled would have been answered, and
        // the update sent, by now.
        try await Task.sleep(for: .milliseconds(3_200))
        #expect(harness.sandbox.counters.calls["update_two_bits", default: 0] == 0)
        for device in devices { #expect(harness.sandbox.device(device.id)?.updates == 0) }
        let audit = try await harness.request("GET", "/v1/admin/audit")
        #expect(audit.json?["events"]?.arrayValue?.isEmpty == true, "no write, not even an intent: \(audit.text)")
        await harness.close()
    }

    /// Shutdown answers a claim still waiting on Apple with 503 `shutting_down`, cancels it, and returns
    /// only after its task has ended; Apple sees no update.
    @Test func shutdownCancelsAClaimInFlightAndAwaitsItsTask() async throws {
        let harness = try await ServiceHarness(extra: ["server": #"{"shutdown_grace_ms":200}"#], apple: ["timeout_ms": "5000"],
                                         sandboxLatencyMilliseconds: 1_500)
        let device = harness.freshDevice()
        async let claim = harness.post("/v1/promotions/spring/claim", #"{"device_token":"\#(device.token)"}"#)
        try await Task.sleep(for: .milliseconds(300))
        let stopping = ContinuousClock.now
        await harness.service.shutdown()
        #expect(ContinuousClock.now - stopping < .milliseconds(1_200), "stopped within the grace period, not after Apple's answer")
        let answer = try await claim
        #expect(answer.status == 503)
        #expect(answer.code == "shutting_down")
        try await Task.sleep(for: .milliseconds(1_800))
        #expect(harness.sandbox.counters.calls["update_two_bits", default: 0] == 0)
        #expect(harness.sandbox.device(device.id)?.updates == 0)
        await harness.close()
    }
}
