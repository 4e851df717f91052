import Foundation
import TestSupport
import Testing

/// A request answered by its deadline, or by shutdown, has its task cancelled: its Apple call is taken
/// out of curl, and Apple's update (the one irreversible step) never starts after the client was answered.
@Suite(.serialized) struct CancellationTests {
    /// Claims whose Apple query outlasts the request deadline are answered 503; once the sandbox would
    /// have answered, it has seen no update and the audit trail holds no write.
    @Test func aClaimAnsweredByItsDeadlineNeverWritesToApple() async throws {
        try await withService(.init(apple: ["timeout_ms": "5000"], sandboxLatencyMilliseconds: 1_500) {
            $0.server.requestDeadlineMilliseconds = 300
        }) { harness in
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
        }
    }

    /// Shutdown answers a claim still waiting on Apple with 503 `shutting_down`, cancels it, and returns
    /// only after its task has ended; Apple sees no update.
    @Test func shutdownCancelsAClaimInFlightAndAwaitsItsTask() async throws {
        try await withService(.init(extra: ["server": #"{"shutdown_grace_ms":200}"#], apple: ["timeout_ms": "5000"],
                                         sandboxLatencyMilliseconds: 1_500)) { harness in
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
        }
    }

    /// Five clients send a claim (one of them keyed) and hang up 300 ms into a 1 s Apple query: their
    /// tasks are cancelled as the deadline's would be, so none of the five devices is written at Apple and
    /// nothing is audited for them. A client that stays connected meanwhile gets its write, the keyed claim's
    /// key is free again for its retry, and the service stays healthy.
    @Test func clientsThatHangUpNeverGetAWriteAtApple() async throws {
        let harness = try await withService(.init(apple: ["timeout_ms": "5000"], sandboxLatencyMilliseconds: 1_000)) { harness in
            let leaving = (0..<5).map { _ in harness.freshDevice() }
            let staying = harness.freshDevice()
            async let stayed = harness.post("/v1/promotions/spring/claim", #"{"device_token":"\#(staying.token)"}"#)
            let sockets = try leaving.enumerated().map { index, device in
                let body = #"{"device_token":"\#(device.token)"}"#
                let key = index == 0 ? "Idempotency-Key: k-hangup\r\n" : ""
                return try Self.send(port: harness.service.port, """
                    POST /v1/promotions/spring/claim HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(harness.keys["all"]!)\r\n\
                    Content-Type: application/json\r\n\(key)Content-Length: \(body.utf8.count)\r\n\r\n\(body)
                    """)
            }
            try await Task.sleep(for: .milliseconds(300))
            for fd in sockets { close(fd) }
            let answer = try await stayed
            #expect(answer.status == 200, "\(answer.text)")
            #expect(harness.sandbox.device(staying.id)?.updates == 1)
            // Past the sandbox's latency for a query and an update: an uncancelled claim would have been written by now.
            try await Task.sleep(for: .milliseconds(1_500))
            for device in leaving { #expect(harness.sandbox.device(device.id)?.updates == 0, "a client that hung up got its write") }
            #expect(harness.sandbox.counters.calls["update_two_bits", default: 0] == 1)
            let audit = try await harness.request("GET", "/v1/admin/audit")
            #expect(audit.json?["events"]?.arrayValue?.count == 1, "only the connected client's write: \(audit.text)")
            #expect(try await harness.request("GET", "/healthz").status == 200)
            let retried = try await harness.post("/v1/promotions/spring/claim", #"{"device_token":"\#(leaving[0].token)"}"#,
                                                 headers: [("Idempotency-Key", "k-hangup")])
            #expect(retried.status == 200, "the key of the claim whose client hung up is free: \(retried.text)")
            #expect(harness.sandbox.device(leaving[0].id)?.updates == 1)
            return harness
        } // closed here: request lines are written in batches; closing flushes them
        let log = harness.logLines.withLock { $0.joined() }
        #expect(log.components(separatedBy: #""route":"hangup","status":499"#).count - 1 == 5, "each hang-up logged once, as 499")
    }

    /// Connects to the service on loopback and sends `request`, leaving the socket open; returns it.
    static func send(port: UInt16, _ request: String) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        let bytes = Array(request.utf8)
        guard connected == 0, bytes.withUnsafeBytes({ Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }) == bytes.count else {
            close(fd)
            throw POSIXError(.ECONNREFUSED)
        }
        return fd
    }
}
