public import EventLoops

extension HTTPServer where Context == Void {
    /// A server whose owner carries nothing per request (the Apple sandbox, tests): the same parameters
    /// as the generic initializer, without the context.
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
        var typedHeadCheck: (@Sendable (ServerRequest, inout Void) -> ServerResponse?)?
        if let headCheck { typedHeadCheck = { request, _ in headCheck(request) } }
        var typedOnAnswered: (@Sendable (ServerRequest, Void, ServerResponse, Duration) -> Void)?
        if let onAnswered { typedOnAnswered = { request, _, response, elapsed in onAnswered(request, response, elapsed) } }
        let typedHandler: Handler = { request, _ in await handler(request) }
        self.init(configuration: configuration, group: group, makeContext: { _ in () },
                  oversizedBody: { request, _ in oversizedBody(request) },
                  deadlineExpired: { request, _ in deadlineExpired(request) },
                  shuttingDown: { request, _ in shuttingDown(request) },
                  clientHungUp: { request, _ in clientHungUp(request) },
                  refused: { refusal, request, _ in refused(refusal, request) },
                  headCheck: typedHeadCheck,
                  onAnswered: typedOnAnswered,
                  onReceiveTimeouts: onReceiveTimeouts,
                  handler: typedHandler)
    }
}
