import Foundation
@testable import EventLoops
import HTTPServer
@testable import OutboundHTTP
import Testing

/// curl's easy handles are reset and reused between calls (`EasyHandlePool`), and header lists are shared
/// between calls with the same headers (`CurlHeaderList`): nothing of one call (method, header, body) may
/// reach another.
@Suite struct OutboundReuseTests {
    @Test func aReusedHandleCarriesNothingFromThePreviousCall() async throws {
        try await withEcho({ request in
            "\(request.method) probe=\(request.header("x-probe") ?? "none") body=\(request.body.count)"
        }) { client, url in
            // One at a time, so each call after the first takes the handle the one before gave back.
            for round in 0..<3 {
                let posted = try await client.send(OutboundRequest(method: "POST", url: url, headers: [("X-Probe", "r\(round)")], body: Data(repeating: 7, count: 3_000)))
                #expect(posted.text == "POST probe=r\(round) body=3000", "\(posted.text)")
                let plain = try await client.send(OutboundRequest(url: url))
                #expect(plain.text == "GET probe=none body=0", "\(plain.text)")
                let put = try await client.send(OutboundRequest(method: "PUT", url: url, body: Data()))
                #expect(put.text == "PUT probe=none body=0", "\(put.text)")
            }
            #expect(EasyHandlePool.shared.idleCount > 0)
        }
    }

    /// A POST without a body goes with `Content-Length: 0`: curl would read it from stdin and frame it chunked,
    /// which TwoBits' edge refuses (411), as the sandbox's control API's `POST /sandbox/v1/devices` showed.
    @Test func aPostWithoutABodyIsSentWithContentLengthZero() async throws {
        try await withEcho({ request in
            "length=\(request.header("content-length") ?? "none") te=\(request.header("transfer-encoding") ?? "none")"
        }) { client, url in
            let posted = try await client.send(OutboundRequest(method: "POST", url: url))
            #expect(posted.status == 200 && posted.text == "length=0 te=none", "\(posted.status) \(posted.text)")
        }
    }

    /// Calls in flight together with three header sets, each replacing another's list in the cache,
    /// each send their own.
    @Test func callsInFlightTogetherWithDifferentHeadersEachSendTheirOwn() async throws {
        try await withEcho({ request in "probe=\(request.header("x-probe") ?? "none")" }) { client, url in
            let answers = try await withThrowingTaskGroup(of: (String, String).self) { group in
                for call in 0..<60 {
                    let probe = ["a", "b", "c"][call % 3]
                    group.addTask {
                        let headers = probe == "c" ? [] : [("X-Probe", probe), ("Content-Type", "text/plain")]
                        let answer = try await client.send(OutboundRequest(method: "POST", url: url, headers: headers, body: Data("x".utf8)))
                        return (probe == "c" ? "none" : probe, answer.text)
                    }
                }
                return try await group.reduce(into: [(String, String)]()) { $0.append($1) }
            }
            #expect(answers.count == 60)
            for (probe, text) in answers { #expect(text == "probe=\(probe)") }
        }
    }

    /// Between calls, a kept-alive connection's socket stays in the loop's epoll set, parked; the next call
    /// on it takes it up again without adding it anew.
    @Test func anIdleConnectionsSocketStaysParkedForTheNextCall() async throws {
        try await withEcho({ _ in "ok" }) { client, url in
            var seen: [CurlMulti.SocketRegistration] = []
            for _ in 0..<4 {
                let answer = try await client.send(OutboundRequest(url: url))
                #expect(answer.text == "ok")
                let now = await client.socketRegistrations()
                #expect(now.count == 1 && now.first?.wanted == false, "\(now)")
                seen += now
            }
            #expect(Set(seen.map(\.fd)).count == 1, "one connection, one socket: \(seen)")
        }
    }

    /// A socket curl closes (here the server asked to close the connection) leaves no registration
    /// behind for its descriptor's number.
    @Test func aSocketCurlClosesIsNoLongerWatched() async throws {
        try await withEcho({ _ in "ok" }) { client, url in
            for _ in 0..<3 {
                let answer = try await client.send(OutboundRequest(url: url, headers: [("Connection", "close")]))
                #expect(answer.text == "ok")
                #expect(await client.socketRegistrations() == [])
            }
        }
    }

    /// When the server closes a parked connection, the loop stops watching it (rather than waking for it
    /// again and again), and the next call opens a new connection.
    @Test func aParkedConnectionClosedByTheServerIsDroppedAndTheNextCallWorks() async throws {
        try await withEcho({ _ in "ok" }, idleSeconds: 1) { client, url in
            // The server closes the connection 1 s after its answer. On a starved scheduler (a parallel
            // `swift test` on two cores) more than that can pass before the look at the loop, which then
            // rightly finds nothing parked: such a look proves nothing, and the call is made again.
            var parked: [CurlMulti.SocketRegistration] = []
            for _ in 0..<5 {
                let sent = ContinuousClock.now
                let first = try await client.send(OutboundRequest(url: url))
                #expect(first.text == "ok")
                parked = await client.socketRegistrations()
                if ContinuousClock.now - sent < .milliseconds(900) { break }
            }
            #expect(parked.count == 1, "\(parked)")
            var left = await client.socketRegistrations()
            for _ in 0..<100 where !left.isEmpty {
                try await Task.sleep(for: .milliseconds(100))
                left = await client.socketRegistrations()
            }
            #expect(left == [], "the server closed the idle connection after 1 s")
            let second = try await client.send(OutboundRequest(url: url))
            #expect(second.text == "ok")
        }
    }

    /// Clients made one after another on one loop, each shut down and freed before the next: each calls
    /// through a multi handle of its own. A loop's own values were keyed by their owner's address, so a
    /// client allocated where a freed one had been found that one's closed handle, and failed `shutDown`.
    @Test func eachClientMadeAfterAnotherWasFreedOnTheSameLoopCallsThroughItsOwnHandle() async throws {
        try await withEcho({ _ in "ok" }) { _, url in
            let loop = EventLoop(name: "clients-in-turn")
            defer { loop.stop() }
            for round in 0..<20 {
                let client = CurlClient()
                #expect(await Self.call(client, url, on: loop).value == "ok", "round \(round)")
                client.shutdown()
            }
        }
    }

    /// A client shut down, on its loop or off it, leaves no multi handle in the loop's storage (checked
    /// while the clients still exist: a client freed shuts down once more).
    @Test func aClientShutDownLeavesNoHandleOnTheLoop() async throws {
        try await withEcho({ _ in "ok" }) { _, url in
            let loop = EventLoop(name: "clients-shut-down")
            defer { loop.stop() }
            let onLoop = CurlClient(), offLoop = CurlClient()
            #expect(await Self.call(onLoop, url, on: loop).value == "ok")
            #expect(await Self.call(offLoop, url, on: loop).value == "ok")
            await Task(executorPreference: loop) { onLoop.shutdown() }.value
            offLoop.shutdown()
            let kept = await Task(executorPreference: loop) { EventLoop.current?.localValueCount ?? -1 }.value
            #expect(kept == 0)
            _ = (onLoop, offLoop)
        }
    }

    /// A GET of `url` by `client`, from a task on `loop`; its answer, or the error's name.
    private static func call(_ client: CurlClient, _ url: String, on loop: EventLoop) -> Task<String, Never> {
        Task(executorPreference: loop) { () -> String in
            do { return try await client.send(OutboundRequest(url: url)).text } catch { return "\(error)" }
        }
    }

    /// Two clients alive together on one loop each have a multi handle of their own: shutting one down
    /// fails its own calls, and leaves the other's call in flight to finish.
    @Test func twoClientsOnOneLoopHaveHandlesOfTheirOwn() async throws {
        let slow = HTTPServer(configuration: HTTPServerConfiguration(threads: 1)) { _ in
            try? await Task.sleep(for: .milliseconds(300))
            return .text(200, "slow")
        }
        try slow.start()
        let url = "http://127.0.0.1:\(slow.port)/"
        let loop = EventLoop(name: "clients-together")
        let first = CurlClient(), second = CurlClient()
        let call = { @Sendable (client: CurlClient) in Self.call(client, url, on: loop) }
        #expect(await call(first).value == "slow")
        let inFlight = call(second)
        for _ in 0..<200 where slow.requestsInFlight != 1 { try await Task.sleep(for: .milliseconds(5)) }
        #expect(slow.requestsInFlight == 1, "the second client's call reached the server")
        first.shutdown()
        #expect(await inFlight.value == "slow", "the first client's shutdown reached the second's call")
        #expect(await call(first).value == "shutDown")
        second.shutdown()
        loop.stop()
        await slow.shutdown()
    }

    /// A loopback server answering 200 with `answer(request)`, and a client to call it.
    private func withEcho(_ answer: @escaping @Sendable (ServerRequest) -> String, idleSeconds: Int = 30,
                          _ body: (CurlClient, String) async throws -> Void) async throws {
        let configuration = HTTPServerConfiguration(threads: 2, connectionTimeoutSeconds: idleSeconds)
        let echo = HTTPServer(configuration: configuration) { request in .text(200, answer(request)) }
        try echo.start()
        let client = CurlClient()
        do { try await body(client, "http://127.0.0.1:\(echo.port)/") } catch {
            client.shutdown()
            await echo.shutdown()
            throw error
        }
        client.shutdown()
        await echo.shutdown()
    }
}
