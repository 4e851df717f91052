import HTTPServer

/// Everything TwoBits learns about one request on its way through the pipeline: one typed value,
/// handed to the controller (inside `APIRequest`), to the access log and to the metrics.
public struct RequestContext: Sendable {
    /// Echoed from a well-formed `X-Request-Id`, otherwise made here; sent back on every answer.
    public let requestID: String
    /// The matched route pattern, or what answered instead ("unmatched", "deadline", "shutdown", "oversized",
    /// "refused"): never the raw path, which may carry ids.
    public var route: String = "unmatched"
    /// The authenticated client (nil on public routes and before authentication).
    public var client: AuthenticatedClient?
    /// Path parameters of the matched route (`{id}` segments, raw).
    public var parameters: [String: String] = [:]
    /// When the server answers 503 if the handler has not (the server's own deadline, from the moment
    /// the whole request arrived; nil in the head check).
    public var deadline: ContinuousClock.Instant?
    /// The route's handler and access rule, once matched.
    var entry: RouteTable.Entry?

    init(requestID: String) {
        self.requestID = requestID
    }

    public var clientName: String { client?.name ?? "-" }
}
