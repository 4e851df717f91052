import EventLoops
import Foundation
import HTTPServer
import Locking
import Testing

/// `HTTPServer.respond(to:)`: the owner's pipeline without a socket, as the daemons run it for a complete request.
@Suite struct InProcessServerTests {
    @Test func runsTheHandlerOnOneOfTheServersLoopsWithTheHeadChecksContext() async throws {
        var configuration = HTTPServerConfiguration()
        configuration.threads = 2
        configuration.requestDeadlineMilliseconds = 5_000
        let answered = Lock<[String]>([])
        let server = HTTPServer(configuration: configuration, edge: LabelEdge(answered: answered),
                                responder: ClosureResponder<String> { request, context in
            let loop = EventLoop.current?.name ?? "no loop"
            let deadline = request.deadline == nil ? "no deadline" : "deadline"
            return .text(200, "\(context) \(loop) \(deadline) q=\(request.query["q"] ?? "-") b=\(String(decoding: request.body, as: UTF8.self))")
        })
        let early = await server.respond(to: ServerRequest(method: "GET", path: "/early"))
        #expect(early.status == 503, "before startInProcess: the shutting-down answer")
        server.startInProcess()
        #expect(server.port == 0, "no socket")
        let request = try ServerRequest(method: "POST", target: "/x?q=a%20b", headers: [("X-Label", "L")], body: Data("hi".utf8))
        let answer = await server.respond(to: request)
        #expect(answer.status == 200)
        let text = String(decoding: answer.body, as: UTF8.self)
        #expect(text.hasPrefix("L+head twobits-loop"), "\(text)")
        #expect(text.hasSuffix("deadline q=a b b=hi"), "\(text)")
        #expect(await server.respond(to: ServerRequest(method: "GET", path: "/refused")).status == 403)
        await server.shutdown(graceMilliseconds: 1_000)
        #expect(await server.respond(to: ServerRequest(method: "GET", path: "/late")).status == 503)
        #expect(answered.withLock { $0 } == ["/early none 503", "/x L+head 200", "/refused none+head 403", "/late none 503"])
    }

    /// The context from the `X-Label` header; the head check adds to it, and every answer is recorded.
    struct LabelEdge: EdgePolicy {
        let answered: Lock<[String]>

        func makeContext(for head: ServerRequest) -> String { head.header("X-Label") ?? "none" }

        func checkHead(_ request: ServerRequest, context: inout String) -> ServerResponse? {
            // The head check sees no body, as at the edge, where it runs before any body byte is read.
            context += request.body.isEmpty ? "+head" : "+body?"
            return request.path == "/refused" ? .text(403, "refused") : nil
        }

        func answered(_ request: ServerRequest, context: String, response: ServerResponse, elapsed: Duration) {
            answered.withLock { $0.append("\(request.path) \(context) \(response.status)") }
        }
    }

    @Test func aTargetsQueryIsDecodedAndRefusedAsAtTheEdge() throws {
        let request = try ServerRequest(method: "GET", target: "/a%2Fb?x=1&y=two+words", headers: [("X-One", "1"), ("x-one", "2")])
        #expect(request.path == "/a%2Fb")
        #expect(request.query == ["x": "1", "y": "two words"])
        #expect(request.headers == ["x-one": "2"])
        #expect(throws: HTTPRefusal.self) { try ServerRequest(method: "GET", target: "/a?x=1&x=2") }
        #expect(throws: HTTPRefusal.self) { try ServerRequest(method: "GET", target: "/a?x=%00") }
    }
}
