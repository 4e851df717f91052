import HTTPServer

/// One check of the request pipeline: routing, authentication, media type, rate limits. A stage reads
/// the request, may add to the context, and refuses the request by throwing the answer.
protocol RequestStage: Sendable {
    func admit(_ request: ServerRequest, _ context: inout RequestContext) throws(APIError)
}
