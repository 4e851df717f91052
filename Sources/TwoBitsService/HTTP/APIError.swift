public import DeviceCheckModel
public import HTTPServer
public import Ledger
public import WireVocabulary

/// An error answer in the one envelope every route uses: `{"error":{"code":"…","message":"…"}}`.
public struct APIError: Error, Sendable {
    public let status: Int
    /// The envelope's `code`, from the wire's vocabulary (the client library matches the same values).
    public let code: APIErrorCode
    public let message: String
    public var retryAfterSeconds: Int?
    /// Extra fields merged into the error object (e.g. `claimed_month`).
    public var details: [String: String] = [:]
    /// What went wrong, for the server's log only (e.g. SQLite's message); never sent to the client.
    public var logDetail: String?
    /// For 405: the methods the path has, sent as `Allow`.
    public var allowedMethods: [String]?
    /// Answered with `Connection: close`: the request is one a proxy in front may have read otherwise.
    public var closesConnection = false

    public init(_ status: Int, _ code: APIErrorCode, _ message: String, retryAfterSeconds: Int? = nil, details: [String: String] = [:]) {
        self.status = status
        self.code = code
        self.message = message
        self.retryAfterSeconds = retryAfterSeconds
        self.details = details
    }

    public static func badRequest(_ message: String) -> APIError { APIError(400, .badRequest, message) }
    public static let invalidDeviceToken = APIError(400, .invalidDeviceToken, "Apple does not accept this device token (malformed, unknown, expired, or from a build of the other environment: Xcode builds are development)")
    public static let unauthorized = APIError(401, .unauthorized, "send Authorization: Bearer <API key>")
    public static let malformedAuthorization: APIError = {
        var error = APIError(400, .badRequest, "send Authorization: Bearer <API key>, with one space and no other whitespace")
        error.closesConnection = true
        return error
    }()
    public static func forbidden(_ message: String) -> APIError { APIError(403, .forbidden, message) }
    public static let notFound = APIError(404, .notFound, "no such route")
    public static func methodNotAllowed(_ allowed: [String]) -> APIError {
        var error = APIError(405, .methodNotAllowed, "allowed: \(allowed.joined(separator: ", "))")
        error.allowedMethods = allowed
        return error
    }
    public static let payloadTooLarge = APIError(413, .payloadTooLarge, "request bodies are limited to 64 KiB")
    public static let unsupportedMediaType = APIError(415, .unsupportedMediaType, "send Content-Type: application/json")
    public static let appleAuthFailed = APIError(502, .appleAuthFailed, "Apple rejected this service's credentials or environment; an operator has been alerted")
    public static func appleUnavailable(_ message: String = "Apple DeviceCheck is not answering; retry later", retryAfter: Int = 2) -> APIError {
        APIError(503, .appleUnavailable, message, retryAfterSeconds: retryAfter)
    }
    public static func notEnabled(_ message: String) -> APIError { APIError(409, .notEnabled, message) }
    /// Any failure of the ledger. Nothing was written to Apple unless the write's intent was recorded first;
    /// the client sees no storage detail (SQLite's text goes to the log through `logDetail`).
    public static func storageUnavailable(_ error: StorageError) -> APIError {
        var answer = APIError(503, .storageUnavailable, "the service cannot record this request right now; retry later", retryAfterSeconds: 5)
        answer.logDetail = error.message
        return answer
    }

    /// Maps the Apple client's three error classes onto HTTP answers.
    public init(_ error: DeviceCheckError) {
        switch error {
        case .invalidDeviceToken: self = .invalidDeviceToken
        case .rejected: self = .appleAuthFailed
        case .unavailable(.overloaded): self = .appleUnavailable("too many calls to Apple are waiting; retry later", retryAfter: 1)
        case .unavailable: self = .appleUnavailable()
        }
    }

    /// The response carrying this error.
    public var response: ServerResponse {
        var error: [String: String] = details
        error[WireField.code] = code.rawValue
        error[WireField.message] = message
        var response = ServerResponse.json(status, [WireField.error: error])
        if let retryAfterSeconds { response.headers.append(("Retry-After", String(retryAfterSeconds))) }
        if let allowedMethods { response.headers.append(("Allow", allowedMethods.joined(separator: ", "))) }
        if closesConnection { response.headers.append(("Connection", "close")) }
        return response
    }
}
