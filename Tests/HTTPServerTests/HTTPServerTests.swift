import Foundation
import OutboundHTTP
import HTTPServer
import Locking
import Testing

@Suite struct HTTPServerTests {
    func withServer(_ configuration: HTTPServerConfiguration = HTTPServerConfiguration(),
                    handler: @escaping @Sendable (ServerRequest) async -> ServerResponse,
                    _ body: (String, CurlClient) async throws -> Void) async throws {
        let server = HTTPServer(configuration: configuration, handler: handler)
        try server.start()
        let client = CurlClient(maxConnectionsPerHost: 256, maxTotalConnections: 512)
        try await body("http://127.0.0.1:\(server.port)", client)
        client.shutdown()
        await server.shutdown(graceMilliseconds: 1_000)
    }

    @Test func echoesMethodPathQueryHeadersAndBody() async throws {
        try await withServer(handler: { request in
            let text = "\(request.method) \(request.path) q=\(request.query["q"] ?? "-") h=\(request.header("X-Test") ?? "-") b=\(String(decoding: request.body, as: UTF8.self))"
            return .text(201, text)
        }) { base, client in
            let response = try await client.send(OutboundRequest(method: "POST", url: base + "/a/b?q=1", headers: [("X-Test", "yes")], body: Data("hello".utf8)))
            #expect(response.status == 201)
            #expect(response.text == "POST /a/b q=1 h=yes b=hello")
        }
    }

    @Test func refusesOversizedBodiesWithoutCallingTheHandler() async throws {
        var config = HTTPServerConfiguration()
        config.maxBodyBytes = 1024
        try await withServer(config, handler: { _ in .text(200, "handled") }) { base, client in
            let big = try await client.send(OutboundRequest(method: "POST", url: base + "/", body: Data(count: 4096)))
            #expect(big.status == 413)
            let small = try await client.send(OutboundRequest(method: "POST", url: base + "/", body: Data(count: 100)))
            #expect(small.status == 200)
        }
    }

    @Test func answersWithTheDeadlineResponseWhenAHandlerIsSlow() async throws {
        var config = HTTPServerConfiguration()
        config.requestDeadlineMilliseconds = 100
        try await withServer(config, handler: { _ in
            try? await Task.sleep(for: .seconds(2))
            return .text(200, "late")
        }) { base, client in
            // The handler would answer 200 after 2 s; the deadline answers first.
            let response = try await client.send(OutboundRequest(url: base + "/slow"))
            #expect(response.status == 503)
        }
    }

    @Test func onAnsweredSeesExactlyTheAnswerSent() async throws {
        var config = HTTPServerConfiguration()
        config.requestDeadlineMilliseconds = 100
        let seen = Lock<[Int]>([])
        let server = HTTPServer(configuration: config, edge: TestEdge(onAnswered: { _, response, _ in seen.withLock { $0.append(response.status) } })) { request in
            if request.path == "/slow" { try? await Task.sleep(for: .milliseconds(400)) }
            return .text(200, "ok")
        }
        try server.start()
        let client = CurlClient()
        let base = "http://127.0.0.1:\(server.port)"
        #expect(try await client.send(OutboundRequest(url: base + "/slow")).status == 503)
        #expect(try await client.send(OutboundRequest(url: base + "/fast")).status == 200)
        // Let the slow handler finish: its late 200 must not be reported.
        try await Task.sleep(for: .milliseconds(500))
        #expect(seen.withLock { $0 } == [503, 200])
        client.shutdown()
        await server.shutdown()
    }

    /// A connection still suspended when the grace period ends is answered, resumed and only then
    /// is the daemon stopped; the handler finishing afterwards touches nothing (no resume of a freed
    /// connection, no second report).
    @Test func shutdownAnswersSuspendedConnectionsBeforeStoppingTheDaemon() async throws {
        let seen = Lock<[Int]>([])
        let server = HTTPServer(configuration: HTTPServerConfiguration(),
                                edge: TestEdge(shuttingDown: .text(503, "restarting"),
                                               onAnswered: { _, response, _ in seen.withLock { $0.append(response.status) } })) { _ in
            // Longer than any test run's stall: the handler ends only because shutdown cancels it.
            try? await Task.sleep(for: .seconds(10))
            return .text(200, "late")
        }
        try server.start()
        let client = CurlClient()
        let url = "http://127.0.0.1:\(server.port)/slow"
        async let answer = client.send(OutboundRequest(url: url))
        let arrival = ContinuousClock.now + .seconds(10)
        while server.requestsInFlight == 0, ContinuousClock.now < arrival { try await Task.sleep(for: .milliseconds(5)) }
        #expect(server.requestsInFlight == 1)
        await server.shutdown(graceMilliseconds: 50)
        let response = try await answer
        #expect(response.status == 503 && response.text == "restarting")
        // The handler ends after the daemon is gone.
        try await Task.sleep(for: .milliseconds(1_000))
        #expect(seen.withLock { $0 } == [503])
        #expect(server.requestsInFlight == 0)
        client.shutdown()
    }

    @Test func clientShutdownFailsTransfersInFlight() async throws {
        let server = HTTPServer(configuration: HTTPServerConfiguration()) { _ in
            try? await Task.sleep(for: .milliseconds(500))
            return .text(200, "ok")
        }
        try server.start()
        let client = CurlClient()
        let url = "http://127.0.0.1:\(server.port)/"
        let answer = Task { () async -> OutboundError? in
            do throws(OutboundError) { _ = try await client.send(OutboundRequest(url: url)); return nil } catch { return error }
        }
        try await Task.sleep(for: .milliseconds(100))
        client.shutdown()
        #expect(await answer.value == OutboundError.shutDown)
        // Sending after shutdown fails at once too.
        await #expect(throws: OutboundError.shutDown) { _ = try await client.send(OutboundRequest(url: "http://127.0.0.1:\(server.port)/")) }
        await server.shutdown()
    }

    @Test func clientAbortsResponsesOverOneMebibyte() async throws {
        let server = HTTPServer(configuration: HTTPServerConfiguration()) { request in
            ServerResponse(status: 200, body: Data(count: request.path == "/big" ? 2 << 20 : 1 << 19))
        }
        try server.start()
        let client = CurlClient()
        let base = "http://127.0.0.1:\(server.port)"
        #expect(try await client.send(OutboundRequest(url: base + "/small")).body.count == 1 << 19)
        await #expect(throws: OutboundError.self) { _ = try await client.send(OutboundRequest(url: base + "/big")) }
        client.shutdown()
        await server.shutdown()
    }

    @Test func holdsManyConcurrentRequestsWithoutAThreadEach() async throws {
        try await withServer(handler: { _ in
            try? await Task.sleep(for: .milliseconds(200))
            return .text(200, "ok")
        }) { base, client in
            let statuses = await withTaskGroup(of: Int.self) { group in
                for _ in 0..<500 {
                    group.addTask { (try? await client.send(OutboundRequest(url: base + "/wait")))?.status ?? -1 }
                }
                return await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(statuses.allSatisfy { $0 == 200 })
        }
    }

    @Test func routerMatchesParametersAndReportsAllowedMethods() {
        var router = Router<String>()
        router.add("POST", "/v1/promotions/{id}/claim", "claim")
        router.add("GET", "/healthz", "health")
        if case .found(let route, let parameters) = router.match(method: "POST", path: "/v1/promotions/spring/claim") {
            #expect(route.handler == "claim")
            #expect(parameters == ["id": "spring"])
        } else { Issue.record("no match") }
        if case .methodNotAllowed(let allowed) = router.match(method: "POST", path: "/healthz") { #expect(allowed == ["GET"]) } else { Issue.record("expected 405") }
        if case .notFound = router.match(method: "GET", path: "/nope") {} else { Issue.record("expected 404") }
        // Empty segments are never collapsed, and a parameter is never empty.
        for path in ["//v1/promotions/spring/claim", "/v1//promotions/spring/claim", "/v1/promotions/spring/claim/", "/v1/promotions//claim", "v1/promotions/spring/claim"] {
            if case .notFound = router.match(method: "POST", path: path) {} else { Issue.record("expected 404 for \(path)") }
        }
    }
}
