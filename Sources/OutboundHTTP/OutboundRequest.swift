public import FoundationEssentials

/// One outgoing HTTP request.
public struct OutboundRequest: Sendable {
    public var method: String
    public var url: String
    public var headers: [(String, String)]
    public var body: Data?
    /// The whole transfer, connect included, must finish within this many milliseconds.
    public var timeoutMilliseconds: Int
    /// Report the link in the response (`OutboundResponse.tls`, `.httpVersion`): a check of the path to a host,
    /// not for every call (it turns curl's verbose text on).
    public var describesLink = false

    public init(method: String = "GET", url: String, headers: [(String, String)] = [], body: Data? = nil, timeoutMilliseconds: Int = 10_000) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeoutMilliseconds = timeoutMilliseconds
    }
}
