import Foundation
import HTTPServer
import Locking
import OutboundHTTP
import Testing

/// The middleware chain over real HTTP on loopback: in order on the way in and reversed on the way out,
/// each seeing the context the ones before it set; one that answers itself stops the chain; and the edge's
/// record sees the answer the client got.
@Suite struct MiddlewareTests {
    /// Appends its name to the context on the way in and to the answer's body on the way out; refuses
    /// `/stop/<name>` itself.
    struct Step: Middleware {
        let name: String

        func handle(_ request: ServerRequest, context: [String],
                    next: (ServerRequest, [String]) async -> ServerResponse) async -> ServerResponse {
            if request.path == "/stop/\(name)" { return .text(429, "stopped by \(name) after \(context.joined(separator: ","))") }
            var response = await next(request, context + [name])
            response.body.append(contentsOf: Array(" out:\(name)".utf8))
            return response
        }
    }

    struct Recording: EdgePolicy {
        let seen: Lock<[String]>
        func makeContext(for head: ServerRequest) -> [String] { ["edge"] }
        func answered(_ request: ServerRequest, context: [String], response: ServerResponse, elapsed: Duration) {
            seen.withLock { $0.append("\(request.path) \(response.status) \(context.joined(separator: ","))") }
        }
    }

    @Test func middlewareRunsInOrderAroundTheResponderAndMayAnswerItself() async throws {
        let seen = Lock<[String]>([])
        let server = HTTPServer(configuration: HTTPServerConfiguration(threads: 1), edge: Recording(seen: seen),
                                middleware: [Step(name: "a"), Step(name: "b")],
                                responder: ClosureResponder<[String]> { request, context in
            .text(200, "\(request.path) saw \(context.joined(separator: ","))")
        })
        try server.start()
        let client = CurlClient(maxConnectionsPerHost: 4, maxTotalConnections: 8)
        let base = "http://127.0.0.1:\(server.port)"

        let through = try await client.send(OutboundRequest(method: "GET", url: base + "/x"))
        #expect(through.status == 200)
        #expect(through.text == "/x saw edge,a,b out:b out:a")

        let stopped = try await client.send(OutboundRequest(method: "GET", url: base + "/stop/b"))
        #expect(stopped.status == 429)
        #expect(stopped.text == "stopped by b after edge,a out:a")

        client.shutdown()
        await server.shutdown(graceMilliseconds: 1_000)
        // The record has the edge's context (the middleware's additions are theirs), and the status sent.
        #expect(seen.withLock { $0 } == ["/x 200 edge", "/stop/b 429 edge"])
    }
}
