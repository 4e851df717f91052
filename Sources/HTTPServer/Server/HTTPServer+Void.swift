public import EventLoops

extension HTTPServer where Context == Void {
    /// A server whose owner carries nothing per request and answers with one function (the Apple sandbox,
    /// tests): the edge's decisions as optional closures, each defaulting to `EdgePolicy`'s.
    public convenience init(configuration: HTTPServerConfiguration,
                            group: EventLoopGroup? = nil,
                            oversizedBody: @escaping @Sendable (ServerRequest) -> ServerResponse = { _ in .text(413, "Payload Too Large") },
                            deadlineExpired: @escaping @Sendable (ServerRequest) -> ServerResponse = { _ in .text(503, "Service Unavailable") },
                            shuttingDown: @escaping @Sendable (ServerRequest) -> ServerResponse = { _ in .text(503, "Service Unavailable") },
                            clientHungUp: @escaping @Sendable (ServerRequest) -> ServerResponse = { _ in .text(499, "Client Closed Request") },
                            refused: @escaping @Sendable (HTTPRefusal, ServerRequest) -> ServerResponse = { refusal, _ in refusal.response },
                            headCheck: (@Sendable (ServerRequest) -> ServerResponse?)? = nil,
                            onAnswered: (@Sendable (ServerRequest, ServerResponse, Duration) -> Void)? = nil,
                            onReceiveTimeouts: (@Sendable (Int) -> Void)? = nil,
                            handler: @escaping @Sendable (ServerRequest) async -> ServerResponse) {
        let edge = ClosureEdgePolicy(oversizedBody: oversizedBody, deadlineExpired: deadlineExpired, shuttingDown: shuttingDown,
                                     clientHungUp: clientHungUp, refused: refused, headCheck: headCheck, onAnswered: onAnswered,
                                     onReceiveTimeouts: onReceiveTimeouts)
        self.init(configuration: configuration, group: group, edge: edge, responder: ClosureResponder { request, _ in await handler(request) })
    }
}

/// The context-less convenience's closures as an `EdgePolicy`.
struct ClosureEdgePolicy: EdgePolicy {
    typealias Context = Void
    let oversizedBody: @Sendable (ServerRequest) -> ServerResponse
    let deadlineExpired: @Sendable (ServerRequest) -> ServerResponse
    let shuttingDown: @Sendable (ServerRequest) -> ServerResponse
    let clientHungUp: @Sendable (ServerRequest) -> ServerResponse
    let refused: @Sendable (HTTPRefusal, ServerRequest) -> ServerResponse
    let headCheck: (@Sendable (ServerRequest) -> ServerResponse?)?
    let onAnswered: (@Sendable (ServerRequest, ServerResponse, Duration) -> Void)?
    let onReceiveTimeouts: (@Sendable (Int) -> Void)?

    func checkHead(_ request: ServerRequest, context: inout Void) -> ServerResponse? { headCheck?(request) }
    func refused(_ refusal: HTTPRefusal, _ request: ServerRequest, context: inout Void) -> ServerResponse { refused(refusal, request) }
    func oversizedBody(_ request: ServerRequest, context: inout Void) -> ServerResponse { oversizedBody(request) }
    func deadlineExpired(_ request: ServerRequest, context: inout Void) -> ServerResponse { deadlineExpired(request) }
    func shuttingDown(_ request: ServerRequest, context: inout Void) -> ServerResponse { shuttingDown(request) }
    func clientHungUp(_ request: ServerRequest, context: inout Void) -> ServerResponse { clientHungUp(request) }
    func answered(_ request: ServerRequest, context: Void, response: ServerResponse, elapsed: Duration) { onAnswered?(request, response, elapsed) }
    func receiveTimeouts(_ closed: Int) { onReceiveTimeouts?(closed) }
}
