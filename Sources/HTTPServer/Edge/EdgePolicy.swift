/// What the owner decides at the server's edge, where no middleware runs: the context of each request from
/// its head, the head check before any body byte is read, the answers the server gives in the handler's
/// place, and the record of every answer sent. One typed value instead of loose closures; every method
/// but `makeContext` has a default (plain-text answers, no head check, no record).
///
/// All of it runs on the loop of the request's connection, synchronously: none may block.
public protocol EdgePolicy<Context>: Sendable {
    /// The owner's per-request context (Hummingbird's `RequestContext` is the model).
    associatedtype Context: Sendable

    /// A context for a request, from its head (no body, no query yet), before any check answers it.
    func makeContext(for head: ServerRequest) -> Context

    /// Decides from the request line and headers alone (the request has no body yet): an answer refuses the
    /// request before any body byte is read, nil lets it through. What it sets in the context, the
    /// responder and the server's own answers then see.
    func checkHead(_ request: ServerRequest, context: inout Context) -> ServerResponse?

    /// The answer to a request the edge refuses (framing, NUL bytes, sizes); sent with `Connection: close`.
    func refused(_ refusal: HTTPRefusal, _ request: ServerRequest, context: inout Context) -> ServerResponse

    /// The answer when a body is over `maxBodyBytes` (the request carries no body).
    func oversizedBody(_ request: ServerRequest, context: inout Context) -> ServerResponse

    /// The answer when the responder has not answered within the deadline (its task is cancelled).
    func deadlineExpired(_ request: ServerRequest, context: inout Context) -> ServerResponse

    /// The answer to requests still running when the shutdown grace period ends (their tasks are cancelled).
    func shuttingDown(_ request: ServerRequest, context: inout Context) -> ServerResponse

    /// What `answered` sees for a request whose client hung up while it was handled (its task is
    /// cancelled); never sent: the connection is closed.
    func clientHungUp(_ request: ServerRequest, context: inout Context) -> ServerResponse

    /// Called once per request with its context and the answer actually sent (logs and metrics). Every
    /// answer method above may change the context (a label for the log), and this sees it so.
    func answered(_ request: ServerRequest, context: Context, response: ServerResponse, elapsed: Duration)

    /// How many connections a receive scan just closed (slow clients).
    func receiveTimeouts(_ closed: Int)
}

extension EdgePolicy {
    public func checkHead(_ request: ServerRequest, context: inout Context) -> ServerResponse? { nil }
    public func refused(_ refusal: HTTPRefusal, _ request: ServerRequest, context: inout Context) -> ServerResponse { refusal.response }
    public func oversizedBody(_ request: ServerRequest, context: inout Context) -> ServerResponse { .text(413, "Payload Too Large") }
    public func deadlineExpired(_ request: ServerRequest, context: inout Context) -> ServerResponse { .text(503, "Service Unavailable") }
    public func shuttingDown(_ request: ServerRequest, context: inout Context) -> ServerResponse { .text(503, "Service Unavailable") }
    public func clientHungUp(_ request: ServerRequest, context: inout Context) -> ServerResponse { .text(499, "Client Closed Request") }
    public func answered(_ request: ServerRequest, context: Context, response: ServerResponse, elapsed: Duration) {}
    public func receiveTimeouts(_ closed: Int) {}
}

extension EdgePolicy where Context == Void {
    public func makeContext(for head: ServerRequest) {}
}

/// The edge of an owner that decides nothing there: every default.
public struct DefaultEdgePolicy: EdgePolicy {
    public typealias Context = Void
    public init() {}
}
