import HTTPServer

/// The answers the server gives in the controller's place, in the envelope with the request's id, each
/// labelled by what answered for the access log; and the receive-deadline counter.
extension RequestPipeline: EdgePolicy {
    func refused(_ refusal: HTTPRefusal, _ request: ServerRequest, context: inout RequestContext) -> ServerResponse {
        framed(APIError(refusal.status, refusal.code, refusal.message).response, &context, answeredBy: "refused")
    }

    func oversizedBody(_ request: ServerRequest, context: inout RequestContext) -> ServerResponse {
        framed(APIError.payloadTooLarge.response, &context, answeredBy: "oversized")
    }

    func deadlineExpired(_ request: ServerRequest, context: inout RequestContext) -> ServerResponse {
        framed(APIError.appleUnavailable("the request did not finish within its deadline; retry later").response, &context, answeredBy: "deadline")
    }

    func shuttingDown(_ request: ServerRequest, context: inout RequestContext) -> ServerResponse {
        framed(APIError(503, .shuttingDown, "the server is restarting; retry", retryAfterSeconds: 1).response, &context, answeredBy: "shutdown")
    }

    /// Logged and counted only, with nginx's 499: the client is gone, and its connection is closed unanswered.
    func clientHungUp(_ request: ServerRequest, context: inout RequestContext) -> ServerResponse {
        framed(ServerResponse(status: 499), &context, answeredBy: "hangup")
    }

    func receiveTimeouts(_ closed: Int) {
        metrics.increment(.httpReceiveTimeouts, by: Double(closed))
    }
}
