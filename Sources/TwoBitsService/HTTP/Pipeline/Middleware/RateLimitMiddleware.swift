import HTTPServer

/// Each client's bucket and the global ceiling on Apple calls (429), once the whole request has arrived
/// and just before the controller, so a request refused earlier (at the head) spends no token.
struct RateLimitMiddleware: Middleware {
    let limits: AppleCallLimits
    /// For the error envelope of a refusal.
    let pipeline: RequestPipeline

    func handle(_ request: ServerRequest, context: RequestContext,
                next: (ServerRequest, RequestContext) async -> ServerResponse) async -> ServerResponse {
        do throws(APIError) {
            try limits.admit(context.client, route: context.route)
        } catch {
            return pipeline.answer(error, context)
        }
        return await next(request, context)
    }
}
