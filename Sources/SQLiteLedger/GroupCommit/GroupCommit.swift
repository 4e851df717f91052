import EventLoops
import Locking

/// Group commit for the ledger's hot writes, batched per event loop, committed on the ledger thread.
///
/// A write asked for on a loop is queued on that loop and the caller suspends; at its next turn, after the
/// I/O of this turn has run, the loop hands everything queued on it to the ledger thread (`LedgerThread`) as
/// one job, which commits it in one transaction (`SQLiteConnection.transaction(each:)`) and resumes each
/// caller with its own outcome from there: the callers' tasks go back to their loop's inbox, and run in the
/// loop's next turn. Requests that arrive
/// together so share one commit: one set of `fcntl` locks and one WAL frame per page touched, instead of one
/// each, and one thread hop each way. The loop never waits for the disk (a stalled one included). While a
/// loop's batch is on the ledger thread, what the loop queues meanwhile waits and goes as its next batch.
/// Off a loop (tools, tests, start-up) a write runs alone, at once, in a transaction of its own.
///
/// Under load the batch may wait a few turns more (`lingerTurns`), as PostgreSQL's `commit_delay` with
/// `commit_siblings` does: when the loop's last commit held more than one write, the commit waits while
/// each turn adds writes to the batch, at most `lingerTurns` turns. A turn under load takes well under a
/// millisecond, and a commit costs the same system calls (locks, two `pwrite`s per page) whatever it
/// holds. A lone write on a quiet loop commits at the next turn, as before.
final class GroupCommit: Sendable {
    private let db: SQLiteConnection
    private let thread: LedgerThread
    private let stats = Lock(GroupCommitStatistics())
    /// The most writes one transaction takes: a turn that queued more commits them in several, so that the
    /// connection's lock (which the other loops' commits wait for) is never held for long.
    let batchLimit: Int
    /// The most turns a batch waits for more writes, under load.
    let lingerTurns: Int

    /// Where each loop keeps the writes queued on it.
    private let key = LoopLocalKey()
    /// The loops that keep a queue for this ledger, to free it there when the ledger goes.
    private let loops = Lock<[WeakLoop]>([])

    private struct WeakLoop: Sendable { weak var loop: EventLoop? }

    init(db: SQLiteConnection, thread: LedgerThread, batchLimit: Int = 128, lingerTurns: Int = 3) {
        self.db = db
        self.thread = thread
        self.batchLimit = max(1, batchLimit)
        self.lingerTurns = max(0, lingerTurns)
    }

    deinit {
        // Nothing is queued: a queued write's commit holds `self` until it has run.
        let key = self.key
        for entry in loops.withLock({ $0 }) {
            entry.loop?.execute { EventLoop.current?.removeLocal(for: key) }
        }
    }

    /// Runs `body` in a transaction, shared with the other writes queued on the calling loop.
    func write<T: Sendable>(_ body: @escaping (SQLiteTransaction) throws(SQLiteError) -> T) async throws(SQLiteError) -> T {
        guard let loop = EventLoop.current else { return try db.transaction(body) }
        // Refused at once while the disk is stalled: queued behind this loop's batch in flight (stuck on the
        // stalled disk) the write would wait for the stall, not reach `LedgerThread.submit`'s refusal.
        if let stalled = thread.stalled { throw stalled }
        let outcome = await withCheckedContinuation { (continuation: CheckedContinuation<Result<T, SQLiteError>, Never>) in
            let pending = loop.local(for: key) {
                loops.withLock { $0.append(WeakLoop(loop: loop)) }
                return PendingWrites()
            }
            let value = ValueBox<T>()
            pending.writes.append(PendingWrite(
                run: { tx throws(SQLiteError) in value.value = try body(tx) },
                finish: { error in continuation.resume(returning: error.map { .failure($0) } ?? .success(value.value!)) }))
            guard !pending.flushScheduled else { return }
            pending.flushScheduled = true
            scheduleCommit(pending, on: loop)
        }
        return try outcome.get()
    }

    /// Runs `commit` at the loop's next turn.
    private func scheduleCommit(_ pending: PendingWrites, on loop: EventLoop) {
        let flush = UncheckedSendable(pending)
        loop.execute { self.commit(flush.value, on: loop) }
    }

    /// On the loop: hands what is queued to the ledger thread, which commits it and resumes each caller on
    /// the loop (their jobs run at the loop's next turn).
    private func commit(_ pending: PendingWrites, on loop: EventLoop) {
        // One batch of a loop at a time: the one in flight commits this one when it is back.
        if pending.inFlight { return }
        // Under load (the last commit held several writes), wait while each turn still adds writes.
        if pending.lastBatch > 1, pending.turnsWaited < lingerTurns,
           pending.writes.count > pending.seen, pending.writes.count < batchLimit {
            pending.seen = pending.writes.count
            pending.turnsWaited += 1
            scheduleCommit(pending, on: loop)
            return
        }
        var writes: [PendingWrite] = []
        swap(&writes, &pending.writes)
        pending.flushScheduled = false
        pending.lastBatch = writes.count
        pending.seen = 0
        pending.turnsWaited = 0
        let batch = UncheckedSendable(writes)
        let flush = UncheckedSendable(pending)
        pending.inFlight = true
        let refusal = thread.submit { [self] in
            var errors: [SQLiteError?] = []
            for start in stride(from: 0, to: batch.value.count, by: batchLimit) {
                let part = batch.value[start..<min(start + batchLimit, batch.value.count)]
                errors += db.transaction(each: part.map(\.run))
                stats.withLock { $0.record(batch: part.count) }
            }
            // Resumed here, not from a job on the loop: a resumed task's job is handed to its loop's inbox, which
            // the loop runs in the turn that takes it; resumed from a job run on the loop, each task would wait
            // for the loop's following turn. Handed over together: one inbox append and at most one wake for
            // the batch, so the loop takes every caller (and then `finished`) in one turn; handed over one by
            // one, a loop woken by the first took the rest in turns of their own, and the claim paid for it.
            // Measured (fallback at 50 ms, 256 connections): p50 about 5 ms lower; Benchmarks/HISTORY.md, 2026-11-27, 14:12-15:05.
            loop.handOverTogether {
                for (write, error) in zip(batch.value, errors) { write.finish(error) }
                loop.execute { [self] in finished(flush.value, on: loop) }
            }
        }
        if let refusal {
            for write in writes { write.finish(refusal) }
            finished(pending, on: loop)
        }
    }

    /// On the loop, once a batch's callers are resumed: sends what queued meanwhile.
    private func finished(_ pending: PendingWrites, on loop: EventLoop) {
        pending.inFlight = false
        // A commit was scheduled for them (`flushScheduled`) and found this batch in flight.
        if !pending.writes.isEmpty { commit(pending, on: loop) }
    }

    /// How the writes were grouped so far (for tests and the benchmark).
    var statistics: GroupCommitStatistics { stats.withLock { $0 } }
}

/// The writes queued on one loop (a loop-local value: touched on that loop's thread only).
private final class PendingWrites {
    var writes: [PendingWrite] = []
    var flushScheduled = false
    /// A batch of this loop is on the ledger thread.
    var inFlight = false
    /// The writes queued when the scheduled commit last looked, and how many turns it has waited.
    var seen = 0
    var turnsWaited = 0
    /// The writes in this loop's last commit: more than one means load.
    var lastBatch = 0
}

private struct PendingWrite {
    let run: (SQLiteTransaction) throws(SQLiteError) -> Void
    /// Resumes the caller (on the ledger thread, or on the loop for a refused batch).
    let finish: (SQLiteError?) -> Void
}

/// A body's value, set when it ran (again, if its batch ran again one by one).
private final class ValueBox<T> {
    var value: T?
}

/// Carries a loop-local value into a closure run on the same loop, or a batch to the ledger thread (which
/// resumes its callers) and the loop-local value back.
// Unchecked: sound only because the value is used by one thread at a time: the loop it belongs to
// (`loop.execute`), or the ledger thread while the loop has handed the batch over (`inFlight`), the queue's
// lock ordering the two.
private struct UncheckedSendable<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
