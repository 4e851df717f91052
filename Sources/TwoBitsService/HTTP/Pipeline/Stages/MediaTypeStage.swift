import HTTPServer

/// A request that carries (or declares) a body must say it is JSON (415), before the body is read.
struct MediaTypeStage: RequestStage {
    func admit(_ request: ServerRequest, _ context: inout RequestContext) throws(APIError) {
        guard request.method == "POST" || request.method == "PUT" || request.method == "PATCH" else { return }
        let declaresBody = !request.body.isEmpty || (Int(request.header("Content-Length") ?? "") ?? 0) > 0
            || request.header("Transfer-Encoding") != nil
        guard declaresBody else { return }
        let type = request.header("Content-Type")?.lowercased() ?? ""
        guard type.hasPrefix("application/json") else { throw .unsupportedMediaType }
    }
}
