import FoundationEssentials

/// What the daemons and libmicrohttpd's callbacks need of a server: its configuration, its handler and
/// answers, and the bookkeeping of its connections and tasks.
///
/// The daemons hold the core, never the `HTTPServer` the owner holds: so an owner that drops its server
/// without `shutdown()` (a test that failed half-way) frees it, and the server's `deinit` stops the
/// daemons on their loops, with nothing left that reads the freed server.
final class ServerCore<Context: Sendable>: Sendable {
    let configuration: HTTPServerConfiguration
    let makeContext: @Sendable (ServerRequest) -> Context
    let handler: HTTPServer<Context>.Handler
    let oversizedBody: @Sendable (ServerRequest, inout Context) -> ServerResponse
    let deadlineExpired: @Sendable (ServerRequest, inout Context) -> ServerResponse
    let shuttingDown: @Sendable (ServerRequest, inout Context) -> ServerResponse
    let clientHungUp: @Sendable (ServerRequest, inout Context) -> ServerResponse
    let onAnswered: (@Sendable (ServerRequest, Context, ServerResponse, Duration) -> Void)?
    let refused: @Sendable (HTTPRefusal, ServerRequest, inout Context) -> ServerResponse
    let headCheck: (@Sendable (ServerRequest, inout Context) -> ServerResponse?)?
    let onReceiveTimeouts: (@Sendable (Int) -> Void)?
    /// Open connections and their receive deadlines, over every loop; also the per-IP and global caps.
    let connections = ConnectionTracker()
    /// Handler tasks started and not yet ended.
    let tasks = HandlerTasks()

    init(configuration: HTTPServerConfiguration,
         makeContext: @escaping @Sendable (ServerRequest) -> Context,
         handler: @escaping HTTPServer<Context>.Handler,
         oversizedBody: @escaping @Sendable (ServerRequest, inout Context) -> ServerResponse,
         deadlineExpired: @escaping @Sendable (ServerRequest, inout Context) -> ServerResponse,
         shuttingDown: @escaping @Sendable (ServerRequest, inout Context) -> ServerResponse,
         clientHungUp: @escaping @Sendable (ServerRequest, inout Context) -> ServerResponse,
         onAnswered: (@Sendable (ServerRequest, Context, ServerResponse, Duration) -> Void)?,
         refused: @escaping @Sendable (HTTPRefusal, ServerRequest, inout Context) -> ServerResponse,
         headCheck: (@Sendable (ServerRequest, inout Context) -> ServerResponse?)?,
         onReceiveTimeouts: (@Sendable (Int) -> Void)?) {
        self.configuration = configuration
        self.makeContext = makeContext
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
}
