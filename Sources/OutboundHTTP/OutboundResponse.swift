public import FoundationEssentials

/// The status and body of a completed exchange.
public struct OutboundResponse: Sendable {
    public let status: Int
    public let body: Data
    public var text: String { String(decoding: body, as: UTF8.self) }
    /// For a request that `describesLink`: the TLS version and cipher curl negotiated ("TLSv1.3 / TLS_AES_…"),
    /// nil over plain http.
    public var tls: String?
    /// For a request that `describesLink`: "HTTP/2", "HTTP/1.1", ….
    public var httpVersion: String?

    public init(status: Int, body: Data, tls: String? = nil, httpVersion: String? = nil) {
        self.status = status
        self.body = body
        self.tls = tls
        self.httpVersion = httpVersion
    }
}
