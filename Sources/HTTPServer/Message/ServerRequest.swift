public import FoundationEssentials

/// A complete HTTP request as the server hands it to a handler.
public struct ServerRequest: Sendable {
    public let method: String
    /// The path without the query string, exactly as received (never percent-decoded: a `%2f` is not
    /// a separator). Route patterns' parameters are raw path segments too.
    public let path: String
    /// Query arguments, percent-decoded (a parameter given twice is refused at the edge).
    public let query: [String: String]
    /// Header values keyed by lowercase name (last value wins; two `Authorization` headers are refused at the edge).
    public let headers: [String: String]
    public var body: Data
    /// Path parameters filled in by the router (`{id}` segments).
    public var parameters: [String: String] = [:]
    /// When the server answers 503 if the handler has not; set by the server when it hands the complete
    /// request to the handler (nil before: in the head check).
    public internal(set) var deadline: ContinuousClock.Instant?

    public init(method: String, path: String, query: [String: String] = [:], headers: [String: String] = [:], body: Data = Data()) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body
    }

    /// A header by case-insensitive name.
    public func header(_ name: String) -> String? { headers[name.lowercased()] }
}
