import EventLoops
import Locking

/// Group commit for the ledger's hot writes, on the event loops.
///
/// A write asked for on a loop is queued on that loop and the caller suspends; the loop commits everything
/// queued on it at its next turn, after the I/O of this turn has run, in one transaction
/// (`SQLiteConnection.transaction(each:)`), and resumes each caller with its own outcome. Requests that
/// arrive together so share one commit: one set of `fcntl` locks and one WAL frame per page touched, instead
/// of one each. The loop is never blocked for longer than the batch's statements, and no thread is crossed.
/// Off a loop (tools, tests, start-up) a write runs alone, at once, in a transaction of its own.
///
/// Under load the batch may wait a few turns more (`lingerTurns`), as PostgreSQL's `commit_delay` with
/// `commit_siblings` does: when the loop's last commit held more than one write, the commit waits while
/// each turn adds writes to the batch, at most `lingerTurns` turns. A turn under load takes well under a
/// millisecond, and a commit costs the same system calls (locks, two `pwrite`s per page) whatever it
/// holds. A lone write on a quiet loop commits at the next turn, as before.
final class GroupCommit: Sendable {
    private let db: SQLiteConnection
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

    init(db: SQLiteConnection, batchLimit: Int = 128, lingerTurns: Int = 3) {
        self.db = db
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

    /// On the loop: commits what is queued, then resumes each caller (their jobs run at the loop's next turn).
    private func commit(_ pending: PendingWrites, on loop: EventLoop) {
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
        for start in stride(from: 0, to: writes.count, by: batchLimit) {
            let batch = writes[start..<min(start + batchLimit, writes.count)]
            let errors = db.transaction(each: batch.map(\.run))
            stats.withLock { $0.record(batch: batch.count) }
            for (write, error) in zip(batch, errors) { write.finish(error) }
        }
    }

    /// How the writes were grouped so far (for tests and the benchmark).
    var statistics: GroupCommitStatistics { stats.withLock { $0 } }
}

/// The writes queued on one loop (a loop-local value: touched on that loop's thread only).
private final class PendingWrites {
    var writes: [PendingWrite] = []
    var flushScheduled = false
    /// The writes queued when the scheduled commit last looked, and how many turns it has waited.
    var seen = 0
    var turnsWaited = 0
    /// The writes in this loop's last commit: more than one means load.
    var lastBatch = 0
}

private struct PendingWrite {
    let run: (SQLiteTransaction) throws(SQLiteError) -> Void
    let finish: (SQLiteError?) -> Void
}

/// A body's value, set when it ran (again, if its batch ran again one by one).
private final class ValueBox<T> {
    var value: T?
}

/// Carries a loop-local value into a closure run on the same loop.
// Unchecked: sound only because the closure carrying it runs on the loop the value belongs to (`loop.execute`).
private struct UncheckedSendable<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
