import CMicroHTTPD
import CMicroHTTPDShims
import EventLoops
import FoundationEssentials

/// One libmicrohttpd daemon run by one event loop: its epoll set is watched by the loop's, `MHD_run`
/// is called on the loop when it is ready, and the requests it suspends are handled by tasks on the
/// same loop. Everything here runs on that loop's thread.
// Unchecked: its `var`s (the MHD daemon, its descriptors) are touched only on its loop's thread.
final class LoopDaemon: @unchecked Sendable {
    /// Held strongly: the core outlives a dropped `HTTPServer` for as long as a daemon or callback needs it.
    let core: ServerCore
    let loop: EventLoop
    private var daemon: OpaquePointer?
    private var epollFD: Int32 = -1
    private var listenSocket: Int32 = -1
    private var runScheduled = false
    private var tick: LoopTimer?
    /// Requests handed to a task and not yet answered, for their deadlines and for shutdown.
    private var pending: [ObjectIdentifier: PendingRequest] = [:]

    private struct PendingRequest {
        let context: RequestContext
        let request: ServerRequest
        let deadline: LoopTimer
        /// The handler's task, cancelled when the deadline or shutdown answers first so its work stops.
        let task: Task<Void, Never>
    }

    init(core: ServerCore, loop: EventLoop) {
        self.core = core
        self.loop = loop
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

    /// Starts the handler of a suspended connection on this loop; its deadline is a loop timer.
    func dispatch(_ request: ServerRequest, context: RequestContext) {
        let key = ObjectIdentifier(context)
        let handler = core.handler
        let tasks = core.tasks
        tasks.started()
        let limit = Duration.milliseconds(core.configuration.requestDeadlineMilliseconds)
        var timed = request
        timed.deadline = .now + limit
        let request = timed
        let deadline = loop.schedule(in: limit) { [weak self] in self?.expire(key) }
        let task = Task(executorPreference: loop) { [self] in
            let response = await handler(request)
            if loop.inLoop { handlerFinished(key, response) } else { loop.execute { self.handlerFinished(key, response) } }
            tasks.ended()
        }
        // The task's first step runs after this returns (it is queued on this loop), so the entry is there.
        pending[key] = PendingRequest(context: context, request: request, deadline: deadline, task: task)
    }

    private func handlerFinished(_ key: ObjectIdentifier, _ response: ServerResponse) {
        guard let entry = pending.removeValue(forKey: key) else { return } // the deadline answered first
        loop.cancel(entry.deadline)
        core.answer(entry.request, with: response, context: entry.context)
    }

    private func expire(_ key: ObjectIdentifier) {
        guard let entry = pending.removeValue(forKey: key) else { return }
        // Answer first: a cancelled handler returns at once, and its answer must not win.
        core.answer(entry.request, with: core.deadlineExpired(entry.request), context: entry.context)
        entry.task.cancel()
    }

    /// Answers every request still running with `response(request)` and cancels its handler.
    func answerAll(_ response: (ServerRequest) -> ServerResponse) {
        let entries = pending
        pending.removeAll()
        for entry in entries.values {
            loop.cancel(entry.deadline)
            core.answer(entry.request, with: response(entry.request), context: entry.context)
            entry.task.cancel()
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
        answerAll { core.shuttingDown($0) }
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
