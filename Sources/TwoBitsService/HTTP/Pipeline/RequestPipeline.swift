import FoundationEssentials
import HTTPServer
import TwoBitsCrypto
import WireFormats
import Mechanisms

/// The request pipeline: small stages in order, then the route's controller, the error envelope, and
/// one log line and the request metrics, all reading one typed `RequestContext`.
///
/// The stages that need no body (routing, authentication, media type) run in the server's head check,
/// before any body byte is read; the server (an `HTTPServer<RequestContext>`) carries their context on to
/// the handler, its own answers and the access log, typed, so the route is matched once.
/// The rest (rate limits) run when the whole request has arrived, just before the controller.
struct RequestPipeline: Sendable {
    let beforeBody: [any RequestStage]
    let beforeHandler: [any RequestStage]
    let metrics: MetricsRegistry
    let logger: LogWriter

    init(table: RouteTable, authenticator: ClientAuthenticator, limits: AppleCallLimits, metrics: MetricsRegistry,
         logger: LogWriter) {
        beforeBody = [RoutingStage(table: table), AuthenticationStage(authenticator: authenticator), MediaTypeStage()]
        beforeHandler = [RateLimitStage(limits: limits)]
        self.metrics = metrics
        self.logger = logger
    }

    /// The server's head check: runs the stages that need no body; an answer refuses the request.
    func head(_ request: ServerRequest, _ context: inout RequestContext) -> ServerResponse? {
        do throws(APIError) {
            for stage in beforeBody { try stage.admit(request, &context) }
            return nil
        } catch {
            return answer(error, context)
        }
    }

    /// The server's handler: the remaining stages, then the controller.
    /// The context is the one the head check filled in (the server runs it on every request it hands here).
    func handle(_ request: ServerRequest, _ admitted: RequestContext) async -> ServerResponse {
        var context = admitted
        context.deadline = request.deadline
        let response: ServerResponse
        do throws(APIError) {
            for stage in beforeHandler { try stage.admit(request, &context) }
            guard let entry = context.entry else { throw .notFound }
            var http = request
            http.parameters = context.parameters
            response = try await entry.handler(APIRequest(http: http, context: context))
        } catch {
            return answer(error, context)
        }
        return framed(response, context)
    }

    /// An error in the envelope, logged when it carries a detail for operators.
    func answer(_ error: APIError, _ context: RequestContext) -> ServerResponse {
        if let detail = error.logDetail {
            logger.log(.error, "request failed", ["request_id": .string(context.requestID), "route": .string(context.route),
                                                  "code": .string(error.code.rawValue), "detail": .string(detail)])
        }
        if error.status == 502 {
            logger.log(.error, "Apple rejected this service's credentials: check apple.team_id, apple.key_id, apple.private_key_file and apple.environment (a device token from a build of the other environment gets the same answer: Xcode builds are development)",
                       ["request_id": .string(context.requestID), "route": .string(context.route)])
        }
        return framed(error.response, context)
    }

    /// Every answer carries the request id; and `Cache-Control:
    /// no-store` unless its route chose otherwise (only the JWKS is cacheable): tokens, debug secrets and
    /// admin data must never sit in a shared or browser cache, and one default leaves no route out.
    func framed(_ response: ServerResponse, _ context: RequestContext) -> ServerResponse {
        var response = response
        if response.header("Cache-Control") == nil { response.headers.append(("Cache-Control", "no-store")) }
        response.headers.append(("X-Request-Id", context.requestID))
        return response
    }

    /// An answer the server gives itself (deadline, shutdown, oversized, refused, hang-up), framed with the
    /// request's context (same request id), which is labelled by what answered for the access log.
    func framed(_ response: ServerResponse, _ context: inout RequestContext, answeredBy label: String) -> ServerResponse {
        context.route = label
        return framed(response, context)
    }

    /// The context the server makes from each request's head, before any check answers it.
    func newContext(for request: ServerRequest) -> RequestContext {
        RequestContext(requestID: Self.requestID(from: request))
    }

    /// One log line and the request counter, for the answer the client actually got.
    func record(_ http: ServerRequest, _ context: RequestContext, _ response: ServerResponse, elapsed: Duration) {
        let route = context.route
        let milliseconds = elapsed.inMilliseconds
        metrics.increment(.httpRequests, route, String(response.status))
        metrics.observe(.httpRequestSeconds, route, value: milliseconds / 1000)
        logger.log(response.status >= 500 ? .error : .info, "request", ordered: [ // sorted by name
            "client": .string(context.clientName),
            "duration_ms": .double((milliseconds * 1000).rounded() / 1000),
            "method": .string(http.method),
            "request_id": .string(context.requestID),
            "route": .string(route),
            "status": .int(response.status),
        ])
    }

    /// Echoes a well-formed `X-Request-Id`, otherwise makes one.
    static func requestID(from http: ServerRequest) -> String {
        if let given = http.header("X-Request-Id"), (1...128).contains(given.utf8.count),
           given.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A) || $0 == 0x2D || $0 == 0x2E || $0 == 0x5F }) {
            return given
        }
        return SecureRandom.bytes(12).hexString
    }
}
