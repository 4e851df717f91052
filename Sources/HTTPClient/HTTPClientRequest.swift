import Foundation

/// One outgoing HTTP request.
public struct HTTPClientRequest: Sendable {
    public var method: String
    public var url: String
    public var headers: [(String, String)]
    public var body: Data?
    /// The whole transfer, connect included, must finish within this many milliseconds.
    public var timeoutMilliseconds: Int

    public init(method: String = "GET", url: String, headers: [(String, String)] = [], body: Data? = nil, timeoutMilliseconds: Int = 10_000) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeoutMilliseconds = timeoutMilliseconds
    }
}

/// The status and body of a completed exchange.
public struct HTTPClientResponse: Sendable {
    public let status: Int
    public let body: Data
    public var text: String { String(decoding: body, as: UTF8.self) }

    public init(status: Int, body: Data) {
        self.status = status
        self.body = body
    }
}

/// Why no response arrived.
public enum HTTPClientError: Error, Equatable, Sendable {
    /// The transfer did not finish within its timeout.
    case timedOut
    /// No connection could be made, or it broke before a whole response arrived.
    case connectionFailed(String)
    /// The client has been shut down.
    case shutDown
}
