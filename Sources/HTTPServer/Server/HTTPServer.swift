import CMicroHTTPD
import CMicroHTTPDShims
public import EventLoops
import FoundationEssentials
import Locking

/// An HTTP/1.1 server on libmicrohttpd that runs async Swift handlers on event loops.
///
/// Each event loop of the group runs one libmicrohttpd daemon (its epoll set inside the loop's, all
/// daemons sharing the port through `SO_REUSEPORT`). When a request is complete its connection is
/// suspended and a task with the loop as its executor computes the answer, so the request is parsed,
/// handled (Apple calls included, when the client is a `CurlClient`) and answered on the thread that
/// accepted it. An awaiting request holds no thread, and every request has a deadline because a
/// suspended connection never times out by itself; its socket is watched meanwhile, so a client that hangs
/// up has its handler's task cancelled as the deadline would.
///
/// Generic over its owner's per-request context (as Hummingbird's `Router<Context>`): the owner's
/// `EdgePolicy` makes one from each request's head and its head check fills it in; the middleware, the
/// responder, the server's own answers and the record of each answer receive it typed. An owner with
/// nothing to carry uses `HTTPServer<Void>`.
public final class HTTPServer<Context: Sendable>: Sendable {
    /// What the daemons need of the server (they hold it, not the server).
    let core: ServerCore<Context>
    public var configuration: HTTPServerConfiguration { core.configuration }

    let givenGroup: EventLoopGroup?
    let state = Lock<State>(State())
    struct State {
        /// Each daemon bound to its loop: only that loop's thread touches it (checked in debug builds).
        var daemons: [LoopBound<LoopDaemon<Context>>] = []
        var ownGroup: EventLoopGroup?
        /// The receive scan re-arms itself while this holds (set at start, cleared by shutdown).
        var scanning = false
        var port: UInt16 = 0
        var limits = Limits(openFiles: OpenFileLimit(soft: 0, hard: 0), maxConnections: 0)
        /// Serving in process (`startInProcess`): the loops `respond(to:)` runs handlers on, and the next one's index.
        var inProcessLoops: [EventLoop] = []
        var nextInProcessLoop = 0
    }

    /// The connection caps in force, after the open-file limit was raised and applied.
    public struct Limits: Sendable, Equatable {
        public let openFiles: OpenFileLimit
        /// The global connection cap: the configured one, lowered to fit under the open-file limit.
        public let maxConnections: Int
    }

    /// - Parameters:
    ///   - group: the event loops to serve on, one daemon each; nil starts `configuration.threads` loops
    ///     of the server's own (stopped by `shutdown`).
    ///   - edge: the owner's decisions where no middleware runs: each request's context, the head check
    ///     before any body byte, the server's own answers, and the record of every answer sent.
    ///   - middleware: run in order, once the whole request has arrived, before `responder`.
    ///   - responder: answers each request (its body read, its deadline set).
    public init(configuration: HTTPServerConfiguration,
                group: EventLoopGroup? = nil,
                edge: some EdgePolicy<Context>,
                middleware: [any Middleware<Context>] = [],
                responder: some Responder<Context>) {
        self.givenGroup = group
        let chain: any Responder<Context> = middleware.isEmpty ? responder : MiddlewareChain(middleware, responder: responder)
        core = ServerCore(configuration: configuration, edge: edge, responder: chain)
    }

    deinit {
        // Dropped without `shutdown()` (a test that failed half-way): stop the daemons on their loops,
        // answering what is in flight, then the loops of the server's own, so nothing of it keeps running.
        let (daemons, ownGroup) = state.withLock { ($0.daemons, $0.ownGroup) }
        for daemon in daemons { daemon.loop.execute { daemon.value.stop() } }
        if let ownGroup { Self.stopLoops(ownGroup) }
    }

    /// The bound port (useful when the configuration asked for port 0).
    public var port: UInt16 { state.withLock { $0.port } }

    /// The connection caps in force (valid after `start()`).
    public var limits: Limits { state.withLock { $0.limits } }

    /// The pause the serving loops take on a wake of a few events, as the loops hold it (a group given at
    /// init keeps its own, whatever the configuration says); 0 once a server with loops of its own stopped.
    public var wakeCoalescingMicroseconds: Int {
        (state.withLock { $0.ownGroup } ?? givenGroup).map { Int($0.loops[0].coalescingMicroseconds) } ?? 0
    }

    /// Raises the open-file limit, binds one daemon per loop and starts serving.
    public func start() throws(HTTPServerError) {
        var probe = in_addr()
        guard inet_pton(AF_INET, configuration.host, &probe) == 1 else { throw .invalidAddress(configuration.host) }
        if configuration.port != 0, twobits_port_is_free(configuration.host, configuration.port) == 0 {
            throw .cannotListen(host: configuration.host, port: configuration.port)
        }
        let openFiles = OpenFileLimit.raiseToHard()
        // Past the file limit accept() fails and nobody gets in, health checks included: stay under it.
        let maxConnections = max(1, min(configuration.maxConnections, openFiles.soft - configuration.reservedFileDescriptors))
        core.connections.setCaps(total: maxConnections, perIP: max(0, configuration.maxConnectionsPerIP))
        let ownGroup = givenGroup == nil ? EventLoopGroup(count: configuration.threads, coalescingMicroseconds: configuration.wakeCoalescingMicroseconds) : nil
        let group = givenGroup ?? ownGroup!
        // Each daemon may hold every connection (the kernel's spread is uneven); the accept policy
        // enforces the global and per-IP caps over all of them. One more than the cap: a daemon holding every
        // connection must still accept the next one, for the policy to refuse and close it; at its own limit
        // MHD stops accepting, and the connection would wait in the kernel's backlog instead.
        let limits = twobits_mhd_limits(connection_limit: UInt32(maxConnections + 1),
                                        connection_timeout_s: UInt32(configuration.connectionTimeoutSeconds),
                                        memory_limit: configuration.connectionMemoryBytes)
        var daemons: [LoopBound<LoopDaemon<Context>>] = []
        var port = configuration.port
        for loop in group.loops {
            // Made here, used on its loop only from now on.
            let daemon = LoopBound(LoopDaemon(core: core, loop: loop), loop: loop)
            let host = configuration.host, wanted = port
            guard let bound = loop.submitAndWait({ daemon.value.start(host: host, port: wanted, limits: limits) }) else {
                for started in daemons { started.loop.submitAndWait { started.value.stop() } }
                ownGroup?.shutdown()
                throw .cannotListen(host: configuration.host, port: configuration.port)
            }
            // Port 0: the first daemon picks one, the others join it.
            port = bound
            daemons.append(daemon)
        }
        state.withLock {
            $0.daemons = daemons
            $0.ownGroup = ownGroup
            $0.scanning = true
            $0.port = port
            $0.limits = Limits(openFiles: openFiles, maxConnections: maxConnections)
        }
        let scanLoop = group.loops[0]
        scanLoop.execute { [self] in scanReceives(on: scanLoop) }
    }

    /// Connections closed so far because their request did not arrive within the receive deadline.
    public var receiveTimeouts: Int { core.connections.receiveTimeouts.withLock { $0 } }

    /// Number of handler tasks running right now.
    public var requestsInFlight: Int { core.tasks.count }

    /// Every `min(500, receive timeout / 20)` ms, until shutdown, shuts down connections still receiving
    /// a request after `server.receive_timeout_ms` (on one loop: the tracker spans all of them).
    private func scanReceives(on loop: EventLoop) {
        let every = Duration.milliseconds(max(10, min(500, configuration.receiveTimeoutMilliseconds / 20)))
        loop.schedule(in: every) { [weak self] in
            guard let self, state.withLock({ $0.scanning }) else { return }
            let closed = core.connections.closeOverdue(limit: .milliseconds(configuration.receiveTimeoutMilliseconds))
            if closed > 0 { core.edge.receiveTimeouts(closed) }
            scanReceives(on: loop)
        }
    }

    /// Stops accepting connections, lets running handlers finish for up to `graceMilliseconds`, answers
    /// the rest with `shuttingDown` and cancels them, writes every answer, and stops the daemons (and
    /// the loops, when they are the server's own).
    public func shutdown(graceMilliseconds: Int = 5_000) async {
        let (daemons, ownGroup) = state.withLock { s -> ([LoopBound<LoopDaemon<Context>>], EventLoopGroup?) in
            defer { s.daemons = []; s.ownGroup = nil; s.scanning = false }
            return (s.daemons, s.ownGroup)
        }
        let core = self.core
        guard let first = daemons.first else {
            // In process (no daemon): the handlers `respond(to:)` still runs get the grace period, then the loops stop.
            state.withLock { $0.inProcessLoops = [] }
            if let ownGroup {
                _ = await core.tasks.waitUntilIdle(timeout: .milliseconds(max(0, graceMilliseconds)), timerLoop: ownGroup.loops[0])
                Self.stopLoops(ownGroup)
            }
            return
        }
        for daemon in daemons { await daemon.loop.submit { daemon.value.quiesce() } }
        if !(await core.tasks.waitUntilIdle(timeout: .milliseconds(max(0, graceMilliseconds)), timerLoop: first.loop)) {
            for daemon in daemons { await daemon.loop.submit { daemon.value.answerAll { core.edge.shuttingDown($0, context: &$1) } } }
            // Cancelled handlers stop at their next check; one that ignores cancellation is not waited for long.
            _ = await core.tasks.waitUntilIdle(timeout: .seconds(1), timerLoop: first.loop)
        }
        for daemon in daemons { await daemon.loop.submit { daemon.value.stop() } }
        if let ownGroup { Self.stopLoops(ownGroup) }
    }

    /// Stops the server's own loops, after the work queued on them; not from a loop thread, which
    /// cannot join itself.
    static func stopLoops(_ group: EventLoopGroup) {
        if EventLoop.current == nil { group.shutdown() } else { DetachedThread.start(name: "twobits-shutdown") { group.shutdown() } }
    }
}
