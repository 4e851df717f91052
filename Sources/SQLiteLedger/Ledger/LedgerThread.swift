import CSQLite
import Dispatch
import EventLoops
import Locking

/// The thread that runs the ledger's SQLite work for the event loops, one job after the other.
///
/// Any SQLite call may wait for the disk: a commit's `pwrite`s, a read that misses the page cache, a lock
/// held across the checkpointer's `fsync`. On a stalled disk (a frozen filesystem, a failing volume) it waits
/// as long as the stall, and on a loop it would stop every connection of that loop: deadlines, `/healthz`,
/// everything. The loops only enqueue here and are resumed (the group commit: one job per loop batch, so one
/// thread hop each way per batch, not per write). One thread is enough: SQLite WAL takes one writer at a time.
///
/// While a job has run longer than `stallLimit` the disk is taken as stalled and new jobs are refused at once
/// (`SQLITE_IOERR`, a store fault: the calls answer 503 `storage_unavailable`, readiness fails) instead of
/// queueing behind it for as long as the stall lasts; jobs already queued run when the disk is back.
final class LedgerThread: Sendable {
    typealias Job = @Sendable () -> Void

    private struct State {
        var queue: [Job] = []
        /// When the job now running started (nil: idle).
        var busySince: ContinuousClock.Instant?
        var stopping = false
        /// The thread's kernel id, once it runs.
        var threadID: Int?
    }

    private let state = Lock(State())
    private let wake = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)
    /// How long one job may run before the disk counts as stalled.
    let stallLimit: Duration

    init(name: String = "twobits-ledger", stallLimit: Duration = .seconds(2)) {
        self.stallLimit = stallLimit
        DetachedThread.start(name: name) { [self] in run() }
    }

    /// Queues `job`, or refuses it (returns the error, and `job` never runs) while the disk is stalled.
    func submit(_ job: @escaping Job) -> SQLiteError? {
        let refusal = state.withLock { s -> SQLiteError? in
            if let stalled = Self.stall(s, limit: stallLimit) { return stalled }
            s.queue.append(job)
            return nil
        }
        if refusal == nil { wake.signal() }
        return refusal
    }

    /// The error a stalled disk gives (nil: not stalled): the job now running has run longer than `stallLimit`.
    var stalled: SQLiteError? { state.withLock { Self.stall($0, limit: stallLimit) } }

    private static func stall(_ s: State, limit: Duration) -> SQLiteError? {
        guard let since = s.busySince, ContinuousClock.now - since > limit else { return nil }
        return SQLiteError(code: SQLITE_IOERR, message: "the ledger's disk has not answered for \(ContinuousClock.now - since) (stalled)")
    }

    /// Runs what is queued, then stops the thread and waits for it (the ledger is being released). On the
    /// thread itself (the ledger's last reference was a job's) it does not wait: the thread stops after the job.
    func stop() {
        let own = state.withLock { s -> Bool in
            s.stopping = true
            return s.threadID == EventLoop.currentThreadID
        }
        wake.signal()
        if !own { finished.wait() }
    }

    private func run() {
        state.withLock { $0.threadID = EventLoop.currentThreadID }
        while true {
            wake.wait()
            while true {
                // All that is queued at once: a job, and what it holds, is released as soon as it has run.
                let next = state.withLock { s -> (jobs: [Job], stopping: Bool) in
                    var jobs: [Job] = []
                    swap(&jobs, &s.queue)
                    return (jobs, s.stopping)
                }
                if next.jobs.isEmpty {
                    if next.stopping {
                        finished.signal()
                        return
                    }
                    break
                }
                for job in next.jobs {
                    state.withLock { $0.busySince = ContinuousClock.now }
                    job()
                }
                state.withLock { $0.busySince = nil }
            }
        }
    }
}
