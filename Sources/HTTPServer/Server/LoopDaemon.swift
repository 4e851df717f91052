import CMicroHTTPD
import CMicroHTTPDShims
import EventLoops
import FoundationEssentials

/// One libmicrohttpd daemon run by one event loop: its epoll set is watched by the loop's, `MHD_run`
/// is called on the loop when it is ready, and the requests it suspends are handled by tasks on the
/// same loop. Everything here runs on that loop's thread; which answer a request gets is its exchange's
/// state machine's decision, and the daemon only does what the machine returns.
// Not Sendable: it crosses threads only inside a `LoopBound` (the server's list, its own closures and its
// handlers' tasks), which checks on access that the thread is its loop's.
final class LoopDaemon<Context: Sendable>: DaemonHooks {
    /// Held strongly: the core outlives a dropped `HTTPServer` for as long as a daemon or callback needs it.
    let core: ServerCore<Context>
    let loop: EventLoop
    private var daemon: OpaquePointer?
    private var epollFD: Int32 = -1
    private var listenSocket: Int32 = -1
    private var runScheduled = false
    private var tick: LoopTimer?
    /// Requests handed to a task and not yet answered, for shutdown. The deadline, the hang-up watch and
    /// the handler's task each hold their exchange itself (alive until the last of them lets go): never a
    /// number or an address another request could reuse, so a late answer finds its own, answered, request.
    private var inFlight: [ObjectIdentifier: ConnectionExchange<Context>] = [:]

    /// The daemon itself as its `@Sendable` loop closures carry it, weakly: the loop never keeps a daemon
    /// alive (a dropped server stops its daemons from its `deinit`).
    private var weakly: LoopBound<Weak> { LoopBound(Weak(daemon: self), loop: loop) }
    private struct Weak { weak var daemon: LoopDaemon? }

    init(core: ServerCore<Context>, loop: EventLoop) {
        self.core = core
        self.loop = loop
        super.init(connections: core.connections)
    }

    override func openExchange(connection: OpaquePointer, target: String, tracked: ConnectionTracker.Connection?) -> UnsafeMutableRawPointer {
        Unmanaged.passRetained(ConnectionExchange<Context>(connection: connection, target: target, tracked: tracked)).toOpaque()
    }

    override func access(connection: OpaquePointer, url: UnsafePointer<CChar>?, method: UnsafePointer<CChar>?, version: UnsafePointer<CChar>?,
                         uploadData: UnsafePointer<CChar>?, uploadSize: UnsafeMutablePointer<Int>,
                         conCls: UnsafeMutablePointer<UnsafeMutableRawPointer?>) -> MHD_Result {
        handleAccess(connection: connection, url: url, method: method, version: version, uploadData: uploadData,
                     uploadSize: uploadSize, conCls: conCls)
    }

    override func closeExchange(_ raw: UnsafeMutableRawPointer) {
        let exchange = Unmanaged<ConnectionExchange<Context>>.fromOpaque(raw)
        let open = exchange.takeUnretainedValue()
        execute(open.machine.completed(), open)
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
        let me = weakly
        loop.execute {
            guard let owner = me.value.daemon else { return }
            owner.runScheduled = false
            owner.run()
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
        let responder = core.responder
        let tasks = core.tasks
        tasks.started()
        let limit = Duration.milliseconds(core.configuration.requestDeadlineMilliseconds)
        var timed = request
        timed.deadline = .now + limit
        let request = timed
        let deadline = loop.schedule(in: limit) { [weak self] in self?.deadlinePassed(exchange) }
        let bound = LoopBound(exchange, loop: loop)
        // Held by the task until its handler returns, as the exchange is.
        let me = LoopBound(self, loop: loop)
        let task = Task(executorPreference: loop) {
            let response = await responder.respond(to: request, context: context)
            let loop = me.loop
            if loop.inLoop { me.value.handlerReturned(bound.value, response) } else { loop.execute { me.value.handlerReturned(bound.value, response) } }
            tasks.ended()
        }
        let socket = core.configuration.cancelsOnHangUp ? exchange.tracked?.fd ?? twobits_mhd_connection_fd(exchange.connection) : -1
        if socket >= 0 {
            loop.watch(socket, for: .hangup) { [weak self] _ in self?.hungUp(exchange, socket: socket) }
        }
        // The task's first step runs after this returns (it is queued on this loop), so all of this is there.
        exchange.dispatched = ConnectionExchange.Dispatched(request: request, context: context, deadline: deadline, task: task, socket: socket)
        inFlight[ObjectIdentifier(exchange)] = exchange
    }

    private func handlerReturned(_ exchange: ConnectionExchange<Context>, _ response: ServerResponse) {
        guard let dispatched = exchange.dispatched else { preconditionFailure("a handler returned for a request never dispatched") }
        execute(exchange.machine.answer(response, from: .handler), exchange, context: dispatched.context)
    }

    private func deadlinePassed(_ exchange: ConnectionExchange<Context>) {
        guard let dispatched = exchange.dispatched else { preconditionFailure("a deadline for a request never dispatched") }
        var context = dispatched.context
        let response = core.edge.deadlineExpired(dispatched.request, context: &context)
        execute(exchange.machine.answer(response, from: .deadline), exchange, context: context)
    }

    /// The client closed its side (or the connection broke) while its request was being handled: nobody
    /// will read the answer, so the handler's task is cancelled as the deadline's is (Apple's update never
    /// starts for it), and the connection is closed without an answer. A half-close (`shutdown(SHUT_WR)`)
    /// counts as a hang-up: HTTP clients do not half-close while they wait for an answer, and nothing on
    /// the socket tells it from a close.
    private func hungUp(_ exchange: ConnectionExchange<Context>, socket: Int32) {
        // As the kernel sees it now: an event epoll reported may be stale (see `EventLoop.peerHungUp`).
        guard EventLoop.peerHungUp(socket), let dispatched = exchange.dispatched else { return }
        var context = dispatched.context
        // What the edge's `answered` sees; the state machine drops the connection for a hang-up.
        let response = core.edge.clientHungUp(dispatched.request, context: &context)
        execute(exchange.machine.answer(response, from: .hangUp), exchange, context: context)
    }

    /// Answers every request still running with `response(request, &context)`, which cancels its handler.
    func answerAll(_ response: (ServerRequest, inout Context) -> ServerResponse) {
        for exchange in Array(inFlight.values) {
            guard let dispatched = exchange.dispatched else { preconditionFailure("a request in flight never dispatched") }
            var context = dispatched.context
            let answer = response(dispatched.request, &context)
            execute(exchange.machine.answer(answer, from: .shutdown), exchange, context: context)
        }
    }

    /// Does what the exchange's state machine decided about a dispatched request's answer.
    private func execute(_ action: ConnectionStateMachine.Action, _ exchange: ConnectionExchange<Context>, context: Context? = nil) {
        switch action {
        case .nothing, .dropLateAnswer:
            break
        case .deliver(let response, let cancelHandler):
            guard let dispatched = settle(exchange) else { preconditionFailure("an answer delivered twice") }
            core.edge.answered(dispatched.request, context: context ?? dispatched.context, response: response, elapsed: ContinuousClock.now - exchange.started)
            MHD_resume_connection(exchange.connection)
            scheduleRun()
            // After the answer: a cancelled handler returns at once, and its answer must not win.
            if cancelHandler { dispatched.task.cancel() }
        case .abandonHandler:
            settle(exchange)?.task.cancel()
        case .discardBody, .answerRefusal, .answerOversized, .suspendAndDispatch, .queueAnswer, .closeConnection:
            preconditionFailure("\(action) is not an answer's action")
        }
    }

    /// Takes a request out of the ones in flight: its deadline timer is cancelled and its socket no longer
    /// watched, before anything resumes the connection (libmicrohttpd may close the socket, and the kernel
    /// reuse its number, on its next run; a watch left behind would then report another connection).
    @discardableResult
    private func settle(_ exchange: ConnectionExchange<Context>) -> ConnectionExchange<Context>.Dispatched? {
        guard inFlight.removeValue(forKey: ObjectIdentifier(exchange)) != nil, let dispatched = exchange.dispatched else { return nil }
        loop.cancel(dispatched.deadline)
        if dispatched.socket >= 0 { loop.unwatch(dispatched.socket) }
        return dispatched
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
        answerAll { core.edge.shuttingDown($0, context: &$1) }
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
