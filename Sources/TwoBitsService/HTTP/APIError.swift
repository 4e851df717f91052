public import DeviceCheckModel
public import HTTPServer
public import Ledger

/// An error answer in the one envelope every route uses: `{"error":{"code":"…","message":"…"}}`.
public struct APIError: Error, Sendable {
    public let status: Int
    public let code: String
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

    public init(_ status: Int, _ code: String, _ message: String, retryAfterSeconds: Int? = nil, details: [String: String] = [:]) {
        self.status = status
        self.code = code
        self.message = message
        self.retryAfterSeconds = retryAfterSeconds
        self.details = details
    }

    public static func badRequest(_ message: String) -> APIError { APIError(400, "bad_request", message) }
    public static let invalidDeviceToken = APIError(400, "invalid_device_token", "Apple does not accept this device token (malformed, unknown, expired, or from a build of the other environment: Xcode builds are development)")
    public static let unauthorized = APIError(401, "unauthorized", "send Authorization: Bearer <API key>")
    public static let malformedAuthorization: APIError = {
        var error = APIError(400, "bad_request", "send Authorization: Bearer <API key>, with one space and no other whitespace")
        error.closesConnection = true
        return error
    }()
    public static func forbidden(_ message: String) -> APIError { APIError(403, "forbidden", message) }
    public static let notFound = APIError(404, "not_found", "no such route")
    public static func methodNotAllowed(_ allowed: [String]) -> APIError {
        var error = APIError(405, "method_not_allowed", "allowed: \(allowed.joined(separator: ", "))")
        error.allowedMethods = allowed
        return error
    }
    public static let payloadTooLarge = APIError(413, "payload_too_large", "request bodies are limited to 64 KiB")
    public static let unsupportedMediaType = APIError(415, "unsupported_media_type", "send Content-Type: application/json")
    public static let appleAuthFailed = APIError(502, "apple_auth_failed", "Apple rejected this service's credentials or environment; an operator has been alerted")
    public static func appleUnavailable(_ message: String = "Apple DeviceCheck is not answering; retry later", retryAfter: Int = 2) -> APIError {
        APIError(503, "apple_unavailable", message, retryAfterSeconds: retryAfter)
    }
    public static func notEnabled(_ message: String) -> APIError { APIError(409, "not_enabled", message) }
    /// Any failure of the ledger. Nothing was written to Apple unless the write's intent was recorded first;
    /// the client sees no storage detail (SQLite's text goes to the log through `logDetail`).
    public static func storageUnavailable(_ error: StorageError) -> APIError {
        var answer = APIError(503, "storage_unavailable", "the service cannot record this request right now; retry later", retryAfterSeconds: 5)
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
        error["code"] = code
        error["message"] = message
        var response = ServerResponse.json(status, ["error": error])
        if let retryAfterSeconds { response.headers.append(("Retry-After", String(retryAfterSeconds))) }
        if let allowedMethods { response.headers.append(("Allow", allowedMethods.joined(separator: ", "))) }
        if closesConnection { response.headers.append(("Connection", "close")) }
        return response
    }
}
