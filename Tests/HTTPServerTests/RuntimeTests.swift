import EventLoops
import Foundation
import OutboundHTTP
import HTTPServer
import Locking
import Testing

/// The event-loop runtime: a request stays on the loop thread that accepted it, a cancelled Apple-style
/// call leaves curl at once, and shutdown awaits the handler tasks it owns.
@Suite struct RuntimeTests {
    /// The handler sees the same loop thread before and after an outgoing call through `CurlClient`
    /// (the call ran on that loop's own curl multi handle), for every one of many concurrent requests.
    @Test func aRequestStaysOnTheThreadThatAcceptedIt() async throws {
        let upstream = HTTPServer(configuration: HTTPServerConfiguration(threads: 1)) { _ in
            try? await Task.sleep(for: .milliseconds(20))
            return .text(200, "upstream")
        }
        try upstream.start()
        let outgoing = CurlClient()
        let upstreamURL = "http://127.0.0.1:\(upstream.port)/"
        let front = HTTPServer(configuration: HTTPServerConfiguration(threads: 2)) { _ in
            let before = EventLoop.currentThreadID
            let onLoop = EventLoop.current != nil
            let answer = try? await outgoing.send(OutboundRequest(url: upstreamURL))
            let after = EventLoop.currentThreadID
            return .text(200, "\(onLoop) \(before) \(after) \(answer?.text ?? "failed")")
        }
        try front.start()
        let client = CurlClient()
        let url = "http://127.0.0.1:\(front.port)/"
        let answers = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<64 { group.addTask { try await client.send(OutboundRequest(url: url)).text } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        var threads = Set<Int>()
        for answer in answers {
            let parts = answer.split(separator: " ").map(String.init)
            #expect(parts.count == 4 && parts[0] == "true" && parts[3] == "upstream", "\(answer)")
            #expect(parts.count == 4 && parts[1] == parts[2], "the request moved from thread \(parts[1]) to \(parts[2])")
            threads.insert(Int(parts[1]) ?? -1)
        }
        #expect(threads.count <= 2, "handlers ran on \(threads.count) threads, the server has 2 loops")
        client.shutdown()
        outgoing.shutdown()
        await front.shutdown()
        await upstream.shutdown()
    }

    /// The handler sees the server's deadline for its request: set when the whole request arrived.
    @Test func theHandlerSeesItsDeadline() async throws {
        let server = HTTPServer(configuration: HTTPServerConfiguration(threads: 1, requestDeadlineMilliseconds: 4_000)) { request in
            guard let deadline = request.deadline else { return .text(500, "no deadline") }
            let left = deadline - .now
            return .text(200, String(left.components.seconds * 1_000 + left.components.attoseconds / 1_000_000_000_000_000))
        }
        try server.start()
        let client = CurlClient()
        let answer = try await client.send(OutboundRequest(url: "http://127.0.0.1:\(server.port)/"))
        let left = Int(answer.text) ?? -1
        #expect(answer.status == 200 && (3_000...4_000).contains(left), "\(answer.status) \(answer.text)")
        client.shutdown()
        await server.shutdown()
    }

    /// Cancelling the task of a call in flight ends it with `cancelled` at once, not when the peer answers.
    @Test func aCancelledCallEndsAtOnce() async throws {
        let server = HTTPServer(configuration: HTTPServerConfiguration(threads: 1)) { _ in
            try? await Task.sleep(for: .milliseconds(3_000))
            return .text(200, "late")
        }
        try server.start()
        let client = CurlClient()
        let url = "http://127.0.0.1:\(server.port)/"
        let call = Task { () async -> OutboundError? in
            do throws(OutboundError) { _ = try await client.send(OutboundRequest(url: url)); return nil } catch { return error }
        }
        try await Task.sleep(for: .milliseconds(150))
        let cancelled = ContinuousClock.now
        call.cancel()
        #expect(await call.value == .cancelled)
        #expect(ContinuousClock.now - cancelled < .milliseconds(1_000))
        // Already cancelled before the call: it never starts.
        let late = Task { () async -> OutboundError? in
            withUnsafeCurrentTask { $0?.cancel() }
            do throws(OutboundError) { _ = try await client.send(OutboundRequest(url: url)); return nil } catch { return error }
        }
        #expect(await late.value == .cancelled)
        client.shutdown()
        await server.shutdown(graceMilliseconds: 100)
    }

    /// Shutdown answers the requests still running when the grace period ends, cancels their tasks and
    /// returns only once those tasks have ended (no sleep-and-hope), long before the handlers' own 30 s.
    @Test func shutdownAwaitsTheTasksItOwns() async throws {
        let ended = Lock<Int>(0)
        let server = HTTPServer(configuration: HTTPServerConfiguration(threads: 2), edge: TestEdge(shuttingDown: .text(503, "stopping"))) { _ in
            defer { ended.withLock { $0 += 1 } }
            try? await Task.sleep(for: .seconds(30))
            return .text(200, "late")
        }
        try server.start()
        let client = CurlClient()
        let url = "http://127.0.0.1:\(server.port)/"
        let calls = (0..<8).map { _ in Task { try await client.send(OutboundRequest(url: url)) } }
        while server.requestsInFlight < 8 { try await Task.sleep(for: .milliseconds(10)) }
        let stopping = ContinuousClock.now
        await server.shutdown(graceMilliseconds: 100)
        let took = ContinuousClock.now - stopping
        #expect(ended.withLock { $0 } == 8, "every handler task ended before shutdown returned")
        #expect(server.requestsInFlight == 0)
        // At least the grace; far less than the handlers' 30 s sleep, which shutdown cancels rather than waits out
        // (a loaded machine, such as a parallel test run, stretches the rest to a second or more).
        #expect(took >= .milliseconds(100) && took < .seconds(10), "took \(took)")
        for call in calls {
            let response = try await call.value
            #expect(response.status == 503 && response.text == "stopping")
        }
        client.shutdown()
    }

    /// A server dropped without `shutdown()` (a test that failed half-way) stops as `shutdown()` would: the
    /// request in flight is answered, the daemons stop listening and the server's own loops end. Nothing
    /// calls into the freed server: not at libmicrohttpd's next half-second tick, not for a new connection.
    /// Under AddressSanitizer, LeakSanitizer checks that no daemon is left behind.
    @Test func aServerDroppedWithoutShutdownStopsAndIsNeverCalledAgain() async throws {
        var server: HTTPServer<Void>? = HTTPServer(configuration: HTTPServerConfiguration(threads: 2),
                                             edge: TestEdge(shuttingDown: .text(503, "stopping"))) { request in
            if request.path == "/slow" { try? await Task.sleep(for: .seconds(10)) }
            return .text(200, "ok")
        }
        try server?.start()
        let url = "http://127.0.0.1:\(server?.port ?? 0)/"
        let client = CurlClient(maxConnectionsPerHost: 2, maxTotalConnections: 2)
        #expect(try await client.send(OutboundRequest(url: url)).status == 200)
        let slow = Task { try await client.send(OutboundRequest(url: url + "slow")) }
        for _ in 0..<200 where server?.requestsInFlight != 1 { try await Task.sleep(for: .milliseconds(10)) }
        #expect(server?.requestsInFlight == 1)
        weak let dropped = server
        server = nil
        #expect(dropped == nil, "nothing else holds the server")
        let answer = try await slow.value
        #expect(answer.status == 503 && answer.text == "stopping")
        // Past a tick (500 ms), then a new connection to the port: nothing listens there any more.
        try await Task.sleep(for: .milliseconds(700))
        await #expect(throws: OutboundError.self) {
            try await client.send(OutboundRequest(url: url, timeoutMilliseconds: 1_000))
        }
        client.shutdown()
    }
}
