/// One step between the edge and the responder, over the request's context: it may answer itself (a
/// refusal), change the request or the context for the steps after it, or change their answer
/// (Hummingbird's `RouterMiddleware` is the model; `MiddlewareChain` composes them).
///
/// What must happen before a body byte is read (framing, authentication, routing) or must see every answer
/// the client gets (the access log) is no middleware: the edge does it (`EdgePolicy`), because a middleware
/// runs only once the whole request has arrived, and never sees the answers the server gives in its place
/// (the deadline's, a hang-up's, shutdown's).
public protocol Middleware<Context>: Sendable {
    associatedtype Context: Sendable

    /// Handles `request`: `next` runs the rest of the chain and returns its answer.
    func handle(_ request: ServerRequest, context: Context,
                next: (ServerRequest, Context) async -> ServerResponse) async -> ServerResponse
}

/// Middleware in order, then a responder: itself a responder, the one the server runs.
public struct MiddlewareChain<Context: Sendable>: Responder {
    public let middleware: [any Middleware<Context>]
    public let responder: any Responder<Context>

    /// The first of `middleware` runs first and sees the answer last.
    public init(_ middleware: [any Middleware<Context>], responder: any Responder<Context>) {
        self.middleware = middleware
        self.responder = responder
    }

    public func respond(to request: ServerRequest, context: Context) async -> ServerResponse {
        await run(from: 0, request, context)
    }

    private func run(from index: Int, _ request: ServerRequest, _ context: Context) async -> ServerResponse {
        guard index < middleware.count else { return await responder.respond(to: request, context: context) }
        return await middleware[index].handle(request, context: context) { request, context in
            await run(from: index + 1, request, context)
        }
    }
}
