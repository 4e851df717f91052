import FoundationEssentials
import HTTPServer
import TwoBitsCrypto
import WireFormats
import Mechanisms

/// The request pipeline, all reading one typed `RequestContext`: at the server's edge (its `EdgePolicy`)
/// the stages that need no body, the server's own answers and one log line and the request metrics for
/// every answer sent; then, once the whole request has arrived, the middleware (rate limits) and the route's
/// controller (`RouteResponder`), with the error envelope.
///
/// The stages that need no body (routing, authentication, media type) run in the server's head check,
/// before any body byte is read: they are no middleware, which runs only once the body has arrived. The
/// server (an `HTTPServer<RequestContext>`) carries their context on to the middleware, the controller, its
/// own answers and the access log, typed, so the route is matched once. The access log is no middleware
/// either: it must see the answers the server gives in the controller's place (deadline, hang-up, shutdown).
struct RequestPipeline: Sendable {
    let beforeBody: [any RequestStage]
    let limits: AppleCallLimits
    let metrics: MetricsRegistry
    let logger: LogWriter

    init(table: RouteTable, authenticator: ClientAuthenticator, limits: AppleCallLimits, metrics: MetricsRegistry,
         logger: LogWriter) {
        beforeBody = [RoutingStage(table: table), AuthenticationStage(authenticator: authenticator), MediaTypeStage()]
        self.limits = limits
        self.metrics = metrics
        self.logger = logger
    }

    /// What runs once the whole request has arrived, in order, before the controller.
    var middleware: [any Middleware<RequestContext>] { [RateLimitMiddleware(limits: limits, pipeline: self)] }

    /// The route's controller, at the end of the middleware.
    var responder: RouteResponder { RouteResponder(pipeline: self) }

    /// The server's head check: runs the stages that need no body; an answer refuses the request.
    func checkHead(_ request: ServerRequest, context: inout RequestContext) -> ServerResponse? {
        do throws(APIError) {
            for stage in beforeBody { try stage.admit(request, &context) }
            return nil
        } catch {
            return answer(error, context)
        }
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
    func makeContext(for head: ServerRequest) -> RequestContext {
        RequestContext(requestID: Self.requestID(from: head))
    }

    /// One log line and the request counter, for the answer the client actually got.
    func answered(_ http: ServerRequest, context: RequestContext, response: ServerResponse, elapsed: Duration) {
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
