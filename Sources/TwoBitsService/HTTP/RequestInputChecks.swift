public import HTTPServer

/// The service's checks of request headers and body fields, reachable from outside the module for the
/// fuzz targets and their replay tests (Tests/FuzzChecks), which see only public API.
public enum RequestInputChecks {
    /// The `X-Request-Id` echoed for `http`, or a fresh one.
    public static func requestID(_ http: ServerRequest) -> String { RequestPipeline.requestID(from: http) }

    /// The request's `Idempotency-Key`, nil when absent; 400 when malformed.
    public static func idempotencyKey(_ http: ServerRequest) throws(APIError) -> String? {
        try PromotionController.idempotencyKey(APIRequest(http: http, context: RequestContext(requestID: "-")))
    }

    /// The body parsed as the routes parse it (`APIRequest.jsonBody`).
    public static func body(_ http: ServerRequest) throws(APIError) -> RequestBody {
        try APIRequest(http: http, context: RequestContext(requestID: "-")).jsonBody()
    }

    /// The typed fields the routes read: `device_token`, `install_id`, `reason`.
    public static func deviceToken(_ body: RequestBody) throws(APIError) -> String { try body.deviceToken().base64 }
    public static func installID(_ body: RequestBody) throws(APIError) -> String? { try body.installID() }
    public static func reason(_ body: RequestBody, required: Bool) throws(APIError) -> String? { try body.reason(required: required) }
}
