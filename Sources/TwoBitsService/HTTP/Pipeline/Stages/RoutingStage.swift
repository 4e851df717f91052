import HTTPServer

/// Finds the route for the method and raw path: 404, or 405 with `Allow`, once per request.
struct RoutingStage: RequestStage {
    let table: RouteTable

    func admit(_ request: ServerRequest, _ context: inout RequestContext) throws(APIError) {
        switch table.router.match(method: request.method, path: request.path) {
        case .notFound: throw .notFound
        case .methodNotAllowed(let allowed): throw .methodNotAllowed(allowed)
        case .found(let route, let parameters):
            context.route = route.pattern
            context.parameters = parameters
            context.entry = route.handler
        }
    }
}
