import FoundationEssentials
public import WireVocabulary

/// Why the server refused a request at its edge, before any handler ran.
///
/// Each refusal is answered at once and the connection is closed: after a framing error or a NUL the
/// server cannot know where the next request would start, and a refused body is never read.
public struct HTTPRefusal: Error, Sendable, Equatable {
    public let status: Int
    /// A stable machine-readable code for the error envelope.
    public let code: APIErrorCode
    public let message: String

    public init(_ status: Int, _ code: APIErrorCode, _ message: String) {
        self.status = status
        self.code = code
        self.message = message
    }

    static func badRequest(_ message: String) -> HTTPRefusal { HTTPRefusal(400, .badRequest, message) }
    static let headersTooLarge = HTTPRefusal(431, .headersTooLarge, "the request line and headers are too large")
    static let urlTooLong = HTTPRefusal(414, .uriTooLong, "the request target is too long")
    static let payloadTooLarge = HTTPRefusal(413, .payloadTooLarge, "the request body is too large")
    static let lengthRequired = HTTPRefusal(411, .lengthRequired, "send the body with Content-Length: chunked request bodies are not accepted")

    /// The refusal in the JSON error envelope `{"error":{"code":…,"message":…}}`, closing the connection.
    public var response: ServerResponse {
        var response = ServerResponse.json(status, [WireField.error: [WireField.code: code.rawValue, WireField.message: message]])
        response.headers.append(("Connection", "close"))
        return response
    }
}
