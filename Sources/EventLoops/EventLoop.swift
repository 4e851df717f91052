import CEventLoop
import Dispatch
import Glibc
import Locking
import Mechanisms

/// One thread and one epoll set: the I/O sources it watches (libmicrohttpd's daemon, libcurl's sockets),
/// its timers, and the Swift jobs that run on it.
///
/// An `EventLoop` is a `TaskExecutor`: a task started with `Task(executorPreference: loop)` runs every
/// partial job on this loop's thread, so a request accepted here is parsed, sent to Apple, answered and
/// written back without a hop between threads (docs/architecture.md, "Threads"). Watchers, timers and
/// loop-local values are touched only on the loop's own thread; `execute` and `enqueue` may be called from
/// any thread.
// Unchecked: its `var`s are touched only on the loop's own thread (asserted in debug builds); other threads reach only the locked inbox.
public final class EventLoop: TaskExecutor, @unchecked Sendable {
    /// What a watched descriptor is ready for.
    public struct IOEvents: OptionSet, Sendable {
        public let rawValue: Int32
        public init(rawValue: Int32) { self.rawValue = rawValue }
        public static let read = IOEvents(rawValue: Int32(TWOBITS_LOOP_READ))
        public static let write = IOEvents(rawValue: Int32(TWOBITS_LOOP_WRITE))
        public static let error = IOEvents(rawValue: Int32(TWOBITS_LOOP_ERROR))
        /// The peer closed its side of a socket, or the connection broke. Watched alone (without `.read`),
        /// bytes the peer sends do not wake the loop; reported with `.read` too, to a watcher of both.
        public static let hangup = IOEvents(rawValue: Int32(TWOBITS_LOOP_HANGUP))
    }

    private enum Work {
        case job(UnownedJob)
        case closure(() -> Void)
    }

    private struct Inbox {
        var work: [Work] = []
        var stopping = false
    }

    /// The thread's name (`twobits-loop-N`).
    public let name: String
    private let epoll: Int32
    private let wakeFD: Int32
    /// Work handed over by other threads; the loop takes it all at once each turn.
    private let inbox = Lock<Inbox>(Inbox())
    private let started = Lock<Bool>(false)
    private var thread = pthread_t()

    // The loop thread's own state: no lock, because nothing else touches it.
    private var ready: [Work] = []
    private var running: [Work] = []
    private var watchers: [Int32: (IOEvents) -> Void] = [:]
    private var timers = LoopTimerQueue()
    private var locals: [LoopLocalKey: AnyObject] = [:]
    private var coalescing = WakeCoalescing()

    /// Creates the loop and starts its thread.
    /// - Parameters:
    ///   - coalescingMicroseconds: how long a wake of fewer than four events waits for more before serving
    ///     them (`coalescingMicroseconds` explains why); 0, the default, serves at once.
    public init(name: String, coalescingMicroseconds: Int = 0) {
        self.name = name
        self.coalescingMicroseconds = UInt32(clamping: coalescingMicroseconds)
        epoll = twobits_loop_epoll_create()
        wakeFD = twobits_loop_eventfd_create()
        precondition(epoll >= 0 && wakeFD >= 0)
        precondition(twobits_loop_watch(epoll, wakeFD, Int32(TWOBITS_LOOP_READ), 0) == 0)
        startThread()
    }

    deinit {
        close(epoll)
        close(wakeFD)
    }

    /// The loop whose thread is calling, if any.
    public static var current: EventLoop? {
        guard let raw = pthread_getspecific(currentKey) else { return nil }
        return Unmanaged<EventLoop>.fromOpaque(raw).takeUnretainedValue()
    }

    /// True on this loop's own thread.
    public var inLoop: Bool { pthread_getspecific(Self.currentKey) == Unmanaged.passUnretained(self).toOpaque() }

    /// The calling thread's kernel id (the same number `ps -L` shows).
    public static var currentThreadID: Int { twobits_loop_thread_id() }

    // MARK: Work from any thread

    /// Runs a Swift job (a partial task) on the loop.
    public func enqueue(_ job: consuming ExecutorJob) {
        let unowned = UnownedJob(job)
        if inLoop { ready.append(.job(unowned)) } else { hand(.job(unowned)) }
    }

    /// Runs `body` on the loop: later in this turn when called on the loop, otherwise at its next turn.
    public func execute(_ body: @escaping @Sendable () -> Void) {
        if inLoop { ready.append(.closure(body)) } else { hand(.closure(body)) }
    }

    /// Runs `body` on the loop and returns its result.
    public func submit<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            execute { continuation.resume(returning: body()) }
        }
    }

    /// Runs `body` on the loop and blocks the calling thread until it returns (inline on the loop
    /// itself). For start-up and tests, never on a hot path.
    public func submitAndWait<T: Sendable>(_ body: @escaping @Sendable () -> T) -> T {
        if inLoop { return body() }
        let done = DispatchSemaphore(value: 0)
        let result = Lock<T?>(nil)
        execute {
            let value = body()
            result.withLock { $0 = value }
            done.signal()
        }
        done.wait()
        return result.withLock { $0! }
    }

    /// Runs `body` on the calling thread (not the loop's): the jobs and closures it hands to this loop (a
    /// continuation it resumes, whose task prefers this loop, included) reach the loop together when `body`
    /// returns, in one hand-over and at most one wake-up, in the order they were handed. Without it each job
    /// is handed over alone, and a loop woken by the first may take the rest in a turn of their own.
    public func handOverTogether(_ body: () -> Void) {
        precondition(!inLoop && pthread_getspecific(Self.collectingKey) == nil, "handOverTogether: not on a loop, not nested")
        let collected = CollectedWork(loop: self)
        let raw = Unmanaged.passUnretained(collected).toOpaque()
        pthread_setspecific(Self.collectingKey, raw)
        body()
        pthread_setspecific(Self.collectingKey, nil)
        guard !collected.work.isEmpty else { return }
        let wasEmpty = inbox.withLock { inbox -> Bool in
            defer { inbox.work.append(contentsOf: collected.work) }
            return inbox.work.isEmpty
        }
        if wasEmpty { twobits_loop_wake(wakeFD) }
    }

    /// What `handOverTogether` gathers on its caller's thread.
    private final class CollectedWork {
        unowned let loop: EventLoop
        var work: [Work] = []
        init(loop: EventLoop) { self.loop = loop }
    }

    private static let collectingKey: pthread_key_t = {
        var key = pthread_key_t()
        precondition(pthread_key_create(&key, nil) == 0)
        return key
    }()

    private func hand(_ work: Work) {
        if let raw = pthread_getspecific(Self.collectingKey) {
            let collected = Unmanaged<CollectedWork>.fromOpaque(raw).takeUnretainedValue()
            if collected.loop === self {
                collected.work.append(work)
                return
            }
        }
        let wasEmpty = inbox.withLock { inbox -> Bool in
            defer { inbox.work.append(work) }
            return inbox.work.isEmpty
        }
        // One wake-up per batch: the loop takes the whole inbox after draining the eventfd.
        if wasEmpty { twobits_loop_wake(wakeFD) }
    }

    /// Stops the thread after the work already handed over has run, and waits for it to end (called on
    /// the loop itself, it ends after the current turn without waiting).
    public func stop() {
        let wasStarted = started.withLock { s -> Bool in defer { s = false }; return s }
        guard wasStarted else { return }
        inbox.withLock { $0.stopping = true }
        twobits_loop_wake(wakeFD)
        if inLoop { pthread_detach(thread) } else { pthread_join(thread, nil) }
    }

    // MARK: The loop thread only

    /// Calls `handler` on the loop whenever `fd` is ready for `events` (level-triggered). Replaces an
    /// earlier watch of the same descriptor.
    public func watch(_ fd: Int32, for events: IOEvents, _ handler: @escaping (IOEvents) -> Void) {
        assert(inLoop)
        let watched = watchers.updateValue(handler, forKey: fd) != nil
        _ = twobits_loop_watch(epoll, fd, events.rawValue, watched ? 1 : 0)
    }

    /// Whether the peer of socket `fd` has closed its side, or the connection broke, now: a `.hangup` epoll
    /// reported may be stale (its descriptor closed and reused earlier in the same turn), this asks the kernel
    /// again (one `poll` that neither waits nor reads).
    public static func peerHungUp(_ fd: Int32) -> Bool { twobits_loop_peer_hung_up(fd) != 0 }

    /// Stops watching `fd` (call it before the descriptor is closed).
    public func unwatch(_ fd: Int32) {
        assert(inLoop)
        if watchers.removeValue(forKey: fd) != nil { _ = twobits_loop_watch(epoll, fd, 0, 1) }
    }

    /// Calls `body` on the loop once `delay` has passed, unless cancelled first.
    @discardableResult
    public func schedule(in delay: Duration, _ body: @escaping () -> Void) -> LoopTimer {
        assert(inLoop)
        let nanoseconds = max(0, delay.wholeNanoseconds)
        return timers.add(at: twobits_loop_now_ns() &+ UInt64(nanoseconds), body)
    }

    /// Cancels a timer that has not fired (a no-op for one that has).
    public func cancel(_ timer: LoopTimer) {
        assert(inLoop)
        timers.cancel(timer)
    }

    /// The loop's own instance of a value, made on first use: one per loop, used only on the loop
    /// (a curl multi handle per client, for instance).
    public func local<Value: AnyObject>(for key: LoopLocalKey, _ make: () -> Value) -> Value {
        assert(inLoop)
        if let existing = locals[key] as? Value { return existing }
        let made = make()
        locals[key] = made
        return made
    }

    /// Frees the loop's value for `key`, if it made one (its owner is done with it).
    public func removeLocal(for key: LoopLocalKey) {
        assert(inLoop)
        locals[key] = nil
    }

    /// How many descriptors the loop watches (for tests: a watch ends with what it watched).
    var watchedDescriptorCount: Int {
        assert(inLoop)
        return watchers.count
    }

    /// How many loop-local values the loop keeps (for tests: owners that are gone leave none behind).
    var localValueCount: Int {
        assert(inLoop)
        return locals.count
    }

    // MARK: The thread

    private static let currentKey: pthread_key_t = {
        var key = pthread_key_t()
        precondition(pthread_key_create(&key, nil) == 0)
        return key
    }()

    private func startThread() {
        started.withLock { $0 = true }
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setstacksize(&attributes, 1 << 20)
        // The thread holds the loop until it ends (released below, in `run`'s caller).
        let context = Unmanaged.passRetained(self).toOpaque()
        let rc = pthread_create(&thread, &attributes, { raw in
            let loop = Unmanaged<EventLoop>.fromOpaque(raw!).takeRetainedValue()
            loop.run()
            return nil
        }, context)
        precondition(rc == 0, "pthread_create failed")
    }

    /// How long a loop whose blocking wait woke for fewer than `coalescingBelow` events sleeps before serving
    /// them, taking whatever else became ready meanwhile in the same turn; 0: serve at once.
    ///
    /// On a lightly loaded loop each event wakes it alone: at 50 ms of Apple latency a claim's three events
    /// (the request, two answers) cost three wakes, and a wake (the context switch, cold caches) cost more
    /// than the event. The price is at most this much latency per such wake; a busy loop, whose wait does not
    /// block or returns many events, never sleeps, and a quiet one stops sleeping while its pauses gather
    /// nothing (`WakeCoalescing`). The service's default (`server.wake_coalescing_us`) and its measurement
    /// are in `ServiceDefaults.Server`.
    public let coalescingMicroseconds: UInt32
    static let coalescingBelow: Int32 = 4

    /// Whether a sparse wake pauses now (`WakeCoalescing`); on the loop's thread only (tests).
    var pausesSparseWakes: Bool {
        assert(inLoop)
        return coalescing.pausing
    }

    /// Appends the `more` events read after the `first` ones, dropping a descriptor already among the first
    /// (epoll reports a still-ready descriptor again; one read never reports a descriptor twice, so only the
    /// first few need a look) and adding its readiness to that entry. Returns the batch's length.
    static func merge(_ fds: inout [Int32], _ flags: inout [Int32], first: Int, more: Int) -> Int32 {
        var count = first
        for j in first..<(first + more) {
            if let k = fds[0..<first].firstIndex(of: fds[j]) {
                flags[k] |= flags[j]
            } else {
                fds[count] = fds[j]
                flags[count] = flags[j]
                count += 1
            }
        }
        return Int32(count)
    }

    private func run() {
        let me = Unmanaged.passUnretained(self).toOpaque()
        pthread_setspecific(Self.currentKey, me)
        twobits_name_current_thread(name)
        var fds = [Int32](repeating: 0, count: 128)
        var flags = [Int32](repeating: 0, count: 128)
        let capacity = Int32(fds.count)
        while true {
            let wait = ready.isEmpty ? timers.waitMilliseconds(now: twobits_loop_now_ns()) : 0
            var count = twobits_loop_wait(epoll, &fds, &flags, capacity, wait)
            // A wait that blocked and woke for a few events: take a moment for more, so one wake serves several.
            if coalescingMicroseconds > 0, wait != 0, count > 0, count < Self.coalescingBelow, coalescing.shouldPause() {
                usleep(coalescingMicroseconds)
                let more = fds.withUnsafeMutableBufferPointer { f in
                    flags.withUnsafeMutableBufferPointer { g in
                        twobits_loop_wait(epoll, f.baseAddress! + Int(count), g.baseAddress! + Int(count), capacity - count, 0)
                    }
                }
                let merged = Self.merge(&fds, &flags, first: Int(count), more: Int(max(0, more)))
                // Only descriptors not already in hand count: a level-triggered one not yet served is reported again.
                coalescing.paused(gathered: Int(merged - count))
                count = merged
            }
            for i in 0..<Int(max(0, count)) {
                if fds[i] == wakeFD {
                    twobits_loop_drain(wakeFD)
                } else if let watcher = watchers[fds[i]] {
                    watcher(IOEvents(rawValue: flags[i]))
                }
            }
            // One at a time: a timer's body may set or cancel timers.
            let now = twobits_loop_now_ns()
            while let body = timers.popExpired(now: now) { body() }
            let stopping = inbox.withLock { inbox -> Bool in
                if !inbox.work.isEmpty {
                    ready.append(contentsOf: inbox.work)
                    inbox.work.removeAll(keepingCapacity: true)
                }
                return inbox.stopping
            }
            runReady()
            if stopping && ready.isEmpty { break }
        }
        // Free what the loop owns on its own thread (loop-local values close their handles here), and
        // drop watchers and timers, whose closures may hold objects that hold the loop.
        locals.removeAll()
        watchers.removeAll()
        timers = LoopTimerQueue()
        pthread_setspecific(Self.currentKey, nil)
    }

    /// Runs the work ready at the start of the turn; what it enqueues runs next turn, after I/O and timers.
    private func runReady() {
        guard !ready.isEmpty else { return }
        swap(&ready, &running)
        let executor = asUnownedTaskExecutor()
        for work in running {
            switch work {
            case .job(let job): job.runSynchronously(on: executor)
            case .closure(let body): body()
            }
        }
        running.removeAll(keepingCapacity: true)
    }
}
