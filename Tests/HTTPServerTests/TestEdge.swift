import HTTPServer

/// A context-less edge policy for tests: the hooks a test watches or sets, the rest `EdgePolicy`'s defaults.
struct TestEdge: EdgePolicy {
    typealias Context = Void
    var headCheck: (@Sendable (ServerRequest) -> ServerResponse?)? = nil
    var shuttingDown: ServerResponse? = nil
    var onAnswered: (@Sendable (ServerRequest, ServerResponse, Duration) -> Void)? = nil

    func checkHead(_ request: ServerRequest, context: inout Void) -> ServerResponse? { headCheck?(request) }

    func shuttingDown(_ request: ServerRequest, context: inout Void) -> ServerResponse {
        shuttingDown ?? .text(503, "Service Unavailable")
    }

    func answered(_ request: ServerRequest, context: Void, response: ServerResponse, elapsed: Duration) {
        onAnswered?(request, response, elapsed)
    }
}
