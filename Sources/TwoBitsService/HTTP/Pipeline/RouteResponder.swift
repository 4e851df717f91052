import HTTPServer

/// The end of the middleware chain: the route the head check matched, its controller, and the error
/// envelope for what the controller throws.
struct RouteResponder: Responder {
    /// For the envelope and the headers every answer carries.
    let pipeline: RequestPipeline

    func respond(to request: ServerRequest, context admitted: RequestContext) async -> ServerResponse {
        var context = admitted
        context.deadline = request.deadline
        let response: ServerResponse
        do throws(APIError) {
            guard let entry = context.entry else { throw .notFound }
            var http = request
            http.parameters = context.parameters
            response = try await entry.handler(APIRequest(http: http, context: context))
        } catch {
            return pipeline.answer(error, context)
        }
        return pipeline.framed(response, context)
    }
}
