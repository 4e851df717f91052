import FoundationEssentials

/// What the daemons and libmicrohttpd's callbacks need of a server: its configuration, its handler and
/// answers, and the bookkeeping of its connections and tasks.
///
/// The daemons hold the core, never the `HTTPServer` the owner holds: so an owner that drops its server
/// without `shutdown()` (a test that failed half-way) frees it, and the server's `deinit` stops the
/// daemons on their loops, with nothing left that reads the freed server.
final class ServerCore: Sendable {
    let configuration: HTTPServerConfiguration
    let handler: HTTPServer.Handler
    let oversizedBody: @Sendable (ServerRequest) -> ServerResponse
    let deadlineExpired: @Sendable (ServerRequest) -> ServerResponse
    let shuttingDown: @Sendable (ServerRequest) -> ServerResponse
    let clientHungUp: @Sendable (ServerRequest) -> ServerResponse
    let onAnswered: (@Sendable (ServerRequest, ServerResponse, Duration) -> Void)?
    let refused: @Sendable (HTTPRefusal, ServerRequest) -> ServerResponse
    let headCheck: (@Sendable (inout ServerRequest) -> ServerResponse?)?
    let onReceiveTimeouts: (@Sendable (Int) -> Void)?
    /// Open connections and their receive deadlines, over every loop; also the per-IP and global caps.
    let connections = ConnectionTracker()
    /// Handler tasks started and not yet ended.
    let tasks = HandlerTasks()

    init(configuration: HTTPServerConfiguration,
         handler: @escaping HTTPServer.Handler,
         oversizedBody: @escaping @Sendable (ServerRequest) -> ServerResponse,
         deadlineExpired: @escaping @Sendable (ServerRequest) -> ServerResponse,
         shuttingDown: @escaping @Sendable (ServerRequest) -> ServerResponse,
         clientHungUp: @escaping @Sendable (ServerRequest) -> ServerResponse,
         onAnswered: (@Sendable (ServerRequest, ServerResponse, Duration) -> Void)?,
         refused: @escaping @Sendable (HTTPRefusal, ServerRequest) -> ServerResponse,
         headCheck: (@Sendable (inout ServerRequest) -> ServerResponse?)?,
         onReceiveTimeouts: (@Sendable (Int) -> Void)?) {
        self.configuration = configuration
        self.handler = handler
        self.oversizedBody = oversizedBody
        self.deadlineExpired = deadlineExpired
        self.shuttingDown = shuttingDown
        self.clientHungUp = clientHungUp
        self.onAnswered = onAnswered
        self.refused = refused
        self.headCheck = headCheck
        self.onReceiveTimeouts = onReceiveTimeouts
    }

    /// Delivers the first answer for a suspended request (on its loop); later ones (a handler finishing
    /// after its deadline) are dropped, so logs and metrics see exactly what the client got.
    func answer(_ request: ServerRequest, with response: ServerResponse, exchange: ConnectionExchange) {
        if exchange.finish(response) { onAnswered?(request, response, ContinuousClock.now - exchange.started) }
    }
}
