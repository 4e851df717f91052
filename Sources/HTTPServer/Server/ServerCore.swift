import FoundationEssentials

/// What the daemons and libmicrohttpd's callbacks need of a server: its configuration, its edge policy and
/// responder, and the bookkeeping of its connections and tasks.
///
/// The daemons hold the core, never the `HTTPServer` the owner holds: so an owner that drops its server
/// without `shutdown()` (a test that failed half-way) frees it, and the server's `deinit` stops the
/// daemons on their loops, with nothing left that reads the freed server.
final class ServerCore<Context: Sendable>: Sendable {
    let configuration: HTTPServerConfiguration
    /// The owner's decisions at the edge: contexts, the head check, the server's own answers, the record.
    let edge: any EdgePolicy<Context>
    /// What answers a request that arrived whole (the owner's middleware chain and its responder).
    let responder: any Responder<Context>
    /// Open connections and their receive deadlines, over every loop; also the per-IP and global caps.
    let connections = ConnectionTracker()
    /// Handler tasks started and not yet ended.
    let tasks = HandlerTasks()

    init(configuration: HTTPServerConfiguration, edge: any EdgePolicy<Context>, responder: any Responder<Context>) {
        self.configuration = configuration
        self.edge = edge
        self.responder = responder
    }
}
