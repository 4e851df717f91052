import FoundationEssentials
import Ledger
import Locking
import Dispatch
import Mechanisms

/// A bounded pool of blocking libpq connections, each on a thread of its own, so that no event loop ever
/// waits on the network: a call queues a job and awaits a continuation the worker resumes.
///
/// A job that no worker starts within `wait` fails with a `StorageError` (the HTTP layer answers 503).
/// A broken connection is dropped and the job fails at once; the next job reconnects, and while the
/// server refuses connections, jobs within `backoff` of the last refusal fail without trying again.
final class ConnectionPool: Sendable {
    private final class Job: Sendable {
        enum Work: Sendable {
            /// Runs on a worker; returns the error instead of resuming, so the worker decides (retry, reconnect).
            case body(@Sendable (PostgresConnection) -> PostgresError?)
            /// One statement, sent in one pipeline with the other statements queued behind it.
            case statement(PostgresStatement, succeed: @Sendable ([PostgresRow]) -> Void)
        }
        let deadline: ContinuousClock.Instant
        let work: Work
        let fail: @Sendable (StorageError) -> Void
        init(deadline: ContinuousClock.Instant, work: Work, fail: @escaping @Sendable (StorageError) -> Void) {
            self.deadline = deadline
            self.work = work
            self.fail = fail
        }
        var isStatement: Bool { if case .statement = work { return true }; return false }
    }

    /// The most statements one pipeline carries: enough to take a burst's queue in one round trip, few
    /// enough that the first of them is not kept waiting on the last.
    static let pipelineLimit = 32

    private struct State {
        var queue = FIFOQueue<Job>()
        var closed = false
        /// The reaper sleeps without a timeout (only `submit` wakes it); otherwise it ticks by itself.
        var reaperIdle = false
        var lastRefusal: (at: ContinuousClock.Instant, message: String)?
        /// The most statements one pipeline has carried (tests read it: batching is the point of `execute`).
        var largestPipeline = 0

        var isEmpty: Bool { queue.isEmpty }
        var first: Job? { queue.first }
        mutating func pop() -> Job? { queue.popFirst() }
    }

    private let uri: String
    let size: Int
    private let wait: Duration
    private let backoff: Duration
    private let idlePing: Duration?
    private let onConnect: (@Sendable (PostgresConnection) throws(PostgresError) -> Void)?
    private let onLost: (@Sendable () -> Void)?
    private let onClose: (@Sendable (PostgresConnection) -> Void)?
    private let state = Lock(State())
    private let workAvailable = DispatchSemaphore(value: 0)
    private let reaperWake = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)
    private let name: String

    /// Starts `size` workers (connecting in the background; `initial` connections are used as they are)
    /// and the thread that fails jobs waiting past `wait`. `idlePing`: a worker idle that long checks its
    /// connection (and reconnects), for the presence connection whose locks must not silently vanish.
    /// `onConnect` runs on each new connection before its first job; `onLost` when one is found broken;
    /// `onClose` on each live connection at `close()`.
    init(uri: String, size: Int, wait: Duration, name: String, backoff: Duration = .milliseconds(250), idlePing: Duration? = nil,
         initial: [PostgresConnection] = [], onConnect: (@Sendable (PostgresConnection) throws(PostgresError) -> Void)? = nil,
         onLost: (@Sendable () -> Void)? = nil, onClose: (@Sendable (PostgresConnection) -> Void)? = nil) {
        self.uri = uri
        self.size = max(1, size)
        self.wait = wait
        self.backoff = backoff
        self.idlePing = idlePing
        self.onConnect = onConnect
        self.onLost = onLost
        self.onClose = onClose
        self.name = name
        for index in 0..<self.size {
            let connection = index < initial.count ? initial[index] : nil
            DetachedThread.start(name: "\(name)-\(index)") { [self] in work(connection, connectFirst: connection == nil) }
        }
        DetachedThread.start(name: "\(name)-reaper") { [self] in reap() }
    }

    /// Runs `body` on a pooled connection. A deadlock or serialization failure runs it again (up to 3
    /// times): bodies are whole transactions or single statements.
    func run<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) throws(PostgresError) -> T) async throws(StorageError) -> T {
        let result: Result<T, StorageError> = await withCheckedContinuation { continuation in
            let job = Job(deadline: .now + wait, work: .body({ connection in
                do throws(PostgresError) {
                    continuation.resume(returning: .success(try body(connection)))
                    return nil
                } catch { return error }
            }), fail: { continuation.resume(returning: .failure($0)) })
            submit(job)
        }
        return try result.get()
    }

    /// Runs one statement on a pooled connection, with the outcome it would have alone. Statements queued
    /// together share a round trip and a commit (`PostgresConnection.pipeline`); a deadlock or serialization
    /// failure runs the statement again, alone (up to 3 times in all).
    func execute(_ sql: String, _ parameters: [PostgresValue]) async throws(StorageError) -> [PostgresRow] {
        let result: Result<[PostgresRow], StorageError> = await withCheckedContinuation { continuation in
            let job = Job(deadline: .now + wait, work: .statement(PostgresStatement(sql: sql, parameters: parameters), succeed: {
                continuation.resume(returning: .success($0))
            }), fail: { continuation.resume(returning: .failure($0)) })
            submit(job)
        }
        return try result.get()
    }

    /// The most statements one round trip has carried so far.
    var largestPipeline: Int { state.withLock { $0.largestPipeline } }

    /// Stops the workers after the jobs they are running, fails the queued ones, closes every connection.
    func close() {
        let queued = state.withLock { s -> [Job]? in
            guard !s.closed else { return nil }
            s.closed = true
            var jobs: [Job] = []
            while let job = s.pop() { jobs.append(job) }
            return jobs
        }
        guard let queued else { return }
        queued.forEach { $0.fail(StorageError("the ledger is closed")) }
        for _ in 0..<size { workAvailable.signal() }
        reaperWake.signal()
        for _ in 0...size { finished.wait() }
    }

    private func submit(_ job: Job) {
        let outcome = state.withLock { s -> (closed: Bool, wakeReaper: Bool) in
            if s.closed { return (true, false) }
            s.queue.append(job)
            let wake = s.reaperIdle
            s.reaperIdle = false
            return (false, wake)
        }
        if outcome.closed { return job.fail(StorageError("the ledger is closed")) }
        workAvailable.signal()
        // Only an idle reaper needs waking: a ticking one sees the job within `wait`, still before its deadline.
        if outcome.wakeReaper { reaperWake.signal() }
    }

    private func busyError() -> StorageError {
        StorageError("no PostgreSQL connection free within \(wait) (all \(size) busy)", kind: .busy)
    }

    /// Fails the jobs at the head of the queue whose wait is over (all wait the same, so the head is the oldest).
    ///
    /// Under load the reaper ticks by itself (every `wait` at most, or at the head's deadline), so a submit
    /// costs no wake-up of this thread; after a few ticks with nothing queued it sleeps until a submit wakes it.
    private func reap() {
        var emptyTicks = 0
        while true {
            let next = state.withLock { s -> (closed: Bool, deadline: ContinuousClock.Instant?) in
                (s.closed, s.queue.first?.deadline)
            }
            if next.closed { break }
            if let deadline = next.deadline {
                emptyTicks = 0
                let remaining = deadline - .now
                if remaining > .zero { _ = reaperWake.wait(timeout: DispatchTime.now() + .nanoseconds(remaining.wholeNanoseconds)) }
                let expired = state.withLock { s -> [Job] in
                    var jobs: [Job] = []
                    let now = ContinuousClock.now
                    while let first = s.first, first.deadline <= now, let job = s.pop() { jobs.append(job) }
                    return jobs
                }
                let error = busyError()
                expired.forEach { $0.fail(error) }
            } else if emptyTicks < 3 {
                // A job queued during this sleep has its deadline at least `wait` away: the next tick is in time.
                emptyTicks += 1
                _ = reaperWake.wait(timeout: DispatchTime.now() + .nanoseconds(wait.wholeNanoseconds))
            } else {
                emptyTicks = 0
                let idle = state.withLock { s -> Bool in
                    guard s.isEmpty, !s.closed else { return false }
                    s.reaperIdle = true
                    return true
                }
                if idle { reaperWake.wait() }
            }
        }
        finished.signal()
    }

    private func work(_ initial: PostgresConnection?, connectFirst: Bool) {
        var connection = initial
        if connectFirst { connection = try? connect() }
        while true {
            let signalled: Bool
            if let idlePing {
                signalled = workAvailable.wait(timeout: DispatchTime.now() + .nanoseconds(idlePing.wholeNanoseconds)) == .success
            } else {
                workAvailable.wait()
                signalled = true
            }
            let (closed, taken) = state.withLock { s -> (Bool, [Job]) in
                guard !s.closed else { return (true, []) }
                guard let job = s.pop() else { return (false, []) }
                var jobs = [job]
                // Statements queued behind a statement go along in its pipeline.
                while job.isStatement, jobs.count < Self.pipelineLimit, let next = s.first, next.isStatement, let taken = s.pop() { jobs.append(taken) }
                s.largestPipeline = max(s.largestPipeline, jobs.count)
                return (false, jobs)
            }
            if closed { break }
            guard !taken.isEmpty else {
                if !signalled { connection = ping(connection) }
                continue
            }
            // Each queued job signalled once: the signals of the jobs taken along are this worker's, so no other
            // worker wakes to an empty queue (a signal another worker already took costs that one wake-up only).
            for _ in 1..<taken.count { _ = workAvailable.wait(timeout: .now()) }
            let now = ContinuousClock.now
            let jobs = taken.filter { job in
                if job.deadline >= now { return true }
                job.fail(busyError())
                return false
            }
            guard !jobs.isEmpty else { continue }
            if let current = connection, !current.isAlive {
                connection = nil
                onLost?()
            }
            if connection == nil {
                do throws(PostgresError) { connection = try connect() } catch {
                    let failure = StorageError("PostgreSQL unreachable: \(error.message)", kind: .unreachable)
                    jobs.forEach { $0.fail(failure) }
                    continue
                }
            }
            guard let current = connection else { continue }
            let healthy: Bool
            if case .body(let perform) = jobs[0].work {
                healthy = runBody(perform, failing: jobs[0], on: current)
            } else {
                healthy = runStatements(jobs, on: current)
            }
            if !healthy {
                connection = nil
                onLost?()
            }
        }
        if let connection { onClose?(connection) }
        finished.signal()
    }

    /// Runs a body job, again on a deadlock or serialization failure; false when the connection broke.
    private func runBody(_ perform: (PostgresConnection) -> PostgresError?, failing job: Job, on connection: PostgresConnection) -> Bool {
        var attempt = 0
        while true {
            attempt += 1
            guard let error = perform(connection) else { return true }
            if error.isRetryable, attempt < 3, connection.isHealthy { continue }
            return fail(job, error, on: connection)
        }
    }

    /// Sends statement jobs in one pipeline and settles each; false when the connection broke.
    private func runStatements(_ jobs: [Job], on connection: PostgresConnection) -> Bool {
        var statements: [PostgresStatement] = []
        var succeed: [([PostgresRow]) -> Void] = []
        for job in jobs {
            guard case .statement(let statement, let done) = job.work else { continue }
            statements.append(statement)
            succeed.append(done)
        }
        var healthy = true
        for (index, outcome) in connection.pipeline(statements).enumerated() {
            var outcome = outcome
            var attempt = 1
            // A deadlock or serialization failure: the statement alone, as `runBody` would do for a body.
            while case .failure(let error) = outcome, error.isRetryable, attempt < 3, connection.isHealthy {
                attempt += 1
                do throws(PostgresError) { outcome = .success(try connection.query(statements[index].sql, statements[index].parameters)) } catch { outcome = .failure(error) }
            }
            switch outcome {
            case .success(let rows): succeed[index](rows)
            case .failure(let error): if !fail(jobs[index], error, on: connection) { healthy = false }
            }
        }
        return healthy
    }

    /// Fails `job` with the error as a StorageError; false when the connection broke (the job then fails as unreachable).
    private func fail(_ job: Job, _ error: PostgresError, on connection: PostgresConnection) -> Bool {
        if error.connectionLost || !connection.isHealthy {
            job.fail(StorageError("PostgreSQL unreachable: \(error.message)", kind: .unreachable))
            return false
        }
        job.fail(StorageError("PostgreSQL: \(error)", storeFault: error.isStoreFault))
        return true
    }

    /// An idle worker's check: a round trip, reconnecting when it fails.
    private func ping(_ connection: PostgresConnection?) -> PostgresConnection? {
        if let connection, connection.isAlive, (try? connection.execute("SELECT 1")) != nil { return connection }
        if connection != nil { onLost?() }
        return try? connect()
    }

    /// A new connection, unless the server refused one less than `backoff` ago (then that refusal again).
    private func connect() throws(PostgresError) -> PostgresConnection {
        let recent = state.withLock { s -> String? in
            guard let last = s.lastRefusal, ContinuousClock.now - last.at < backoff else { return nil }
            return last.message
        }
        if let recent { throw PostgresError(sqlState: nil, message: recent, connectionLost: true) }
        do throws(PostgresError) {
            let connection = try PostgresConnection(uri: uri)
            try onConnect?(connection)
            state.withLock { $0.lastRefusal = nil }
            return connection
        } catch {
            state.withLock { $0.lastRefusal = (.now, error.message) }
            throw error
        }
    }
}
