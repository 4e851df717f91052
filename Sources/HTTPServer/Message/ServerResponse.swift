public import FoundationEssentials

/// A response, or an instruction to drop the connection without one.
public struct ServerResponse: Sendable {
    public var status: Int
    public var headers: [(String, String)]
    public var body: Data
    /// When true the server closes the connection without answering (used to emulate network faults).
    public var dropConnection = false

    public init(status: Int, headers: [(String, String)] = [], body: Data = Data()) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A plain-text response.
    public static func text(_ status: Int, _ text: String) -> ServerResponse {
        ServerResponse(status: status, headers: [("Content-Type", "text/plain; charset=utf-8")], body: Data(text.utf8))
    }

    /// A JSON response from an `Encodable` value (keys sorted, so output is stable).
    public static func json<T: Encodable>(_ status: Int, _ value: T) -> ServerResponse {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let body = (try? encoder.encode(value)) ?? Data("{}".utf8)
        return ServerResponse(status: status, headers: [("Content-Type", "application/json")], body: body)
    }

    /// Closes the connection without a response.
    public static var dropped: ServerResponse {
        var r = ServerResponse(status: 500)
        r.dropConnection = true
        return r
    }

    /// The first value of a header by case-insensitive name.
    public func header(_ name: String) -> String? {
        let wanted = name.lowercased()
        return headers.first { $0.0.lowercased() == wanted }?.1
    }
}
