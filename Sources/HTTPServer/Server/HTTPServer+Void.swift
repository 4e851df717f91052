public import EventLoops

extension HTTPServer where Context == Void {
    /// A server whose owner carries nothing per request and answers with one function (the Apple sandbox,
    /// tests), its edge `EdgePolicy`'s defaults unless it gives one.
    public convenience init(configuration: HTTPServerConfiguration,
                            group: EventLoopGroup? = nil,
                            edge: some EdgePolicy<Void> = DefaultEdgePolicy(),
                            handler: @escaping @Sendable (ServerRequest) async -> ServerResponse) {
        self.init(configuration: configuration, group: group, edge: edge, responder: ClosureResponder { request, _ in await handler(request) })
    }
}
