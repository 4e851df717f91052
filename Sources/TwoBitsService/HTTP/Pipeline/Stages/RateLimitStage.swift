import HTTPServer

/// Each client's bucket and the global ceiling on Apple calls (429), once the whole request has arrived
/// and just before the handler, so a request refused earlier spends no token.
struct RateLimitStage: RequestStage {
    let limits: AppleCallLimits

    func admit(_ request: ServerRequest, _ context: inout RequestContext) throws(APIError) {
        try limits.admit(context.client, route: context.route)
    }
}
