import CMicroHTTPD
import CMicroHTTPDShims
import EventLoops
import FoundationEssentials

/// One libmicrohttpd daemon run by one event loop: its epoll set is watched by the loop's, `MHD_run`
/// is called on the loop when it is ready, and the requests it suspends are handled by tasks on the
/// same loop. Everything here runs on that loop's thread.
// Unchecked: its `var`s (the MHD daemon, its descriptors) are touched only on its loop's thread.
final class LoopDaemon<Context: Sendable>: DaemonHooks, @unchecked Sendable {
    /// Held strongly: the core outlives a dropped `HTTPServer` for as long as a daemon or callback needs it.
    let core: ServerCore<Context>
    let loop: EventLoop
    private var daemon: OpaquePointer?
    private var epollFD: Int32 = -1
    private var listenSocket: Int32 = -1
    private var runScheduled = false
    private var tick: LoopTimer?
    /// Requests handed to a task and not yet answered, for their deadlines and for shutdown, by dispatch number.
    private var pending: [UInt64: PendingRequest] = [:]
    /// The number of the next dispatched request. Never an exchange's address: a handler can return after its
    /// request was answered (deadline, hang-up) and its exchange freed, when a new exchange may sit at the same
    /// address; its answer must find nothing, not that other client's request.
    private var nextDispatch: UInt64 = 0

    private struct PendingRequest {
        let exchange: ConnectionExchange<Context>
        let request: ServerRequest
        let context: Context
        let deadline: LoopTimer
        /// The handler's task, cancelled when the deadline, a hang-up or shutdown answers first so its work stops.
        let task: Task<Void, Never>
        /// The connection's socket, watched for a hang-up while the request is suspended (-1: not watched).
        let socket: Int32
    }

    init(core: ServerCore<Context>, loop: EventLoop) {
        self.core = core
        self.loop = loop
        super.init(connections: core.connections)
    }

    override func openExchange(connection: OpaquePointer, target: String, tracked: ConnectionTracker.Connection?) -> UnsafeMutableRawPointer {
        Unmanaged.passRetained(ConnectionExchange(connection: connection, target: target, tracked: tracked, daemon: self)).toOpaque()
    }

    override func access(connection: OpaquePointer, url: UnsafePointer<CChar>?, method: UnsafePointer<CChar>?, version: UnsafePointer<CChar>?,
                         uploadData: UnsafePointer<CChar>?, uploadSize: UnsafeMutablePointer<Int>,
                         conCls: UnsafeMutablePointer<UnsafeMutableRawPointer?>) -> MHD_Result {
        handleAccess(connection: connection, url: url, method: method, version: version, uploadData: uploadData,
                     uploadSize: uploadSize, conCls: conCls)
    }

    override func closeExchange(_ raw: UnsafeMutableRawPointer) {
        let exchange = Unmanaged<ConnectionExchange<Context>>.fromOpaque(raw)
        _ = exchange.takeUnretainedValue().machine.completed()
        exchange.release()
    }

    /// Binds and starts watching; returns the bound port, nil when the address cannot be bound.
    func start(host: String, port: UInt16, limits: twobits_mhd_limits) -> UInt16? {
        let me = Unmanaged.passUnretained(self).toOpaque()
        guard let daemon = twobits_mhd_start(twobits_mhd_loop_flags(), host, port, acceptPolicy, accessHandler,
                                             completedHandler, requestLineHandler, connectionNotifier, me, limits)
        else { return nil }
        self.daemon = daemon
        epollFD = twobits_mhd_epoll_fd(daemon)
        // Weak, here and in the loop's other closures: the loop never keeps a daemon alive, nor calls one
        // that is gone (a dropped server stops its daemons from its `deinit`; a freed daemon's descriptor
        // leaves the loop).
        loop.watch(epollFD, for: .read) { [weak self, epollFD] _ in
            // On the loop's thread: `EventLoop.current` is this loop (capturing it would make a cycle loop → watcher → loop).
            guard let self else { EventLoop.current?.unwatch(epollFD); return }
            run()
        }
        armTick()
        return twobits_mhd_bound_port(daemon)
    }

    /// Lets libmicrohttpd accept, read, call the handlers and write what is ready, without blocking.
    func run() {
        guard let daemon else { return }
        MHD_run(daemon)
        // 0: MHD still has work it could not finish in one pass (edge-triggered reads, resumed connections).
        if twobits_mhd_timeout(daemon) == 0 { scheduleRun() }
    }

    /// Runs the daemon once more at the end of this turn (after a connection was resumed).
    func scheduleRun() {
        guard !runScheduled else { return }
        runScheduled = true
        loop.execute { [weak self] in
            guard let self else { return }
            runScheduled = false
            run()
        }
    }

    /// libmicrohttpd's own timeouts (idle connections) are in seconds: a run every half second keeps them.
    private func armTick() {
        tick = loop.schedule(in: .milliseconds(500)) { [weak self] in
            guard let self else { return }
            run()
            if daemon != nil { armTick() }
        }
    }

    /// Starts the handler of a suspended connection on this loop; its deadline is a loop timer, and its
    /// socket is watched for the client hanging up.
    ///
    /// libmicrohttpd neither reads a suspended connection nor calls anything for it (not even its
    /// completion notice) until it is resumed: without the watch, a client that hung up would still
    /// get its work done, Apple's write included, up to the deadline. The watch costs one `epoll_ctl` add
    /// and one delete per dispatched request (a few µs), and no wake unless the client hangs up: it asks for
    /// EPOLLRDHUP only, so a pipelining client's next request waits in the socket as before.
    func dispatch(_ request: ServerRequest, _ context: Context, exchange: ConnectionExchange<Context>) {
        nextDispatch &+= 1
        let key = nextDispatch
        let handler = core.handler
        let tasks = core.tasks
        tasks.started()
        let limit = Duration.milliseconds(core.configuration.requestDeadlineMilliseconds)
        var timed = request
        timed.deadline = .now + limit
        let request = timed
        let deadline = loop.schedule(in: limit) { [weak self] in self?.expire(key) }
        let task = Task(executorPreference: loop) { [self] in
            let response = await handler(request, context)
            if loop.inLoop { handlerFinished(key, response) } else { loop.execute { self.handlerFinished(key, response) } }
            tasks.ended()
        }
        let socket = core.configuration.cancelsOnHangUp ? exchange.tracked?.fd ?? twobits_mhd_connection_fd(exchange.connection) : -1
        if socket >= 0 {
            loop.watch(socket, for: .hangup) { [weak self] _ in self?.hungUp(key, socket: socket) }
        }
        // The task's first step runs after this returns (it is queued on this loop), so the entry is there.
        pending[key] = PendingRequest(exchange: exchange, request: request, context: context, deadline: deadline, task: task, socket: socket)
    }

    /// Takes a request out of the pending ones: its deadline timer is cancelled and its socket no longer
    /// watched, before anything resumes the connection (libmicrohttpd may close the socket, and the kernel
    /// reuse its number, on its next run; a watch left behind would then report another connection).
    private func settle(_ key: UInt64) -> PendingRequest? {
        guard let entry = pending.removeValue(forKey: key) else { return nil }
        loop.cancel(entry.deadline)
        if entry.socket >= 0 { loop.unwatch(entry.socket) }
        return entry
    }

    private func handlerFinished(_ key: UInt64, _ response: ServerResponse) {
        guard let entry = settle(key) else { return } // the deadline or a hang-up answered first
        core.answer(entry.request, entry.context, with: response, exchange: entry.exchange, from: .handler)
    }

    private func expire(_ key: UInt64) {
        guard let entry = settle(key) else { return }
        // Answer first: a cancelled handler returns at once, and its answer must not win.
        var context = entry.context
        let response = core.deadlineExpired(entry.request, &context)
        if case .resumeAndCancelHandler = core.answer(entry.request, context, with: response, exchange: entry.exchange, from: .replacingHandler) {
            entry.task.cancel()
        }
    }

    /// The client closed its side (or the connection broke) while its request was being handled: nobody
    /// will read the answer, so the handler's task is cancelled as the deadline's is (Apple's update never
    /// starts for it), and the connection is closed without an answer. A half-close (`shutdown(SHUT_WR)`)
    /// counts as a hang-up: HTTP clients do not half-close while they wait for an answer, and nothing on
    /// the socket tells it from a close.
    private func hungUp(_ key: UInt64, socket: Int32) {
        // Only a hang-up of this request's connection, as the kernel sees it now.
        guard pending[key]?.socket == socket, EventLoop.peerHungUp(socket), let entry = settle(key) else { return }
        var context = entry.context
        var response = core.clientHungUp(entry.request, &context)
        // What `onAnswered` sees; the state machine drops the connection for a hang-up in any case.
        response.dropConnection = true
        if case .resumeAndCancelHandler = core.answer(entry.request, context, with: response, exchange: entry.exchange, from: .hangUp) {
            entry.task.cancel()
        }
    }

    /// Answers every request still running with `response(request, &context)` and cancels its handler.
    func answerAll(_ response: (ServerRequest, inout Context) -> ServerResponse) {
        for key in Array(pending.keys) {
            guard let entry = settle(key) else { continue }
            var context = entry.context
            let answer = response(entry.request, &context)
            if case .resumeAndCancelHandler = core.answer(entry.request, context, with: answer, exchange: entry.exchange, from: .replacingHandler) {
                entry.task.cancel()
            }
        }
    }

    /// Stops accepting: new connections go to the other daemons sharing the port, or are refused.
    func quiesce() {
        guard let daemon, listenSocket < 0 else { return }
        listenSocket = MHD_quiesce_daemon(daemon)
    }

    /// Writes the answers just given, then stops the daemon (every suspended connection has been
    /// resumed by then: MHD forbids stopping with one suspended) and closes the listening socket.
    func stop() {
        guard let daemon else { return }
        answerAll { core.shuttingDown($0, &$1) }
        for _ in 0..<16 {
            MHD_run(daemon)
            if twobits_mhd_timeout(daemon) != 0 { break }
        }
        if let tick { loop.cancel(tick) }
        loop.unwatch(epollFD)
        self.daemon = nil
        MHD_stop_daemon(daemon)
        // After quiesce the listening socket is ours to close, and only once the daemon has stopped.
        if listenSocket >= 0 { close(listenSocket) }
        listenSocket = -1
    }
}
