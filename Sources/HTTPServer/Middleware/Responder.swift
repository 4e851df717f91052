/// What answers a request once it has passed the edge and arrived whole: the end of a middleware chain
/// (Hummingbird's `HTTPResponder` is the model). The server runs it in a task on the loop that accepted
/// the request; its answer is sent unless the deadline, a hang-up or shutdown answered first.
public protocol Responder<Context>: Sendable {
    /// The owner's per-request context (made and filled in by its `EdgePolicy` from the head).
    associatedtype Context: Sendable

    /// The answer to `request` (its body read, its deadline set) with the context its head check filled in.
    func respond(to request: ServerRequest, context: Context) async -> ServerResponse
}

/// A responder made of a closure: for owners whose whole handling is one function (the sandbox, tests).
public struct ClosureResponder<Context: Sendable>: Responder {
    private let body: @Sendable (ServerRequest, Context) async -> ServerResponse

    public init(_ body: @escaping @Sendable (ServerRequest, Context) async -> ServerResponse) {
        self.body = body
    }

    public func respond(to request: ServerRequest, context: Context) async -> ServerResponse {
        await body(request, context)
    }
}
