import FoundationEssentials
import Locking
import Dispatch
import Mechanisms

/// Checkpoints the ledger's write-ahead log on a thread of its own, through a connection of its own.
///
/// SQLite's automatic checkpoint runs inside the commit that crosses 1000 WAL pages, on the caller's
/// thread, and fsyncs the database file: that commit takes milliseconds instead of microseconds. On the
/// ledger thread (`LedgerThread`), that stall would hold every ledger call queued behind it. Here
/// the commit only signals (when the log has `pages` or more), and this thread also checkpoints every
/// `interval`. PASSIVE checkpoints never wait for or block the writer.
final class WALCheckpointer: Sendable {
    private let wake = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)
    /// (a checkpoint was requested and not yet started, stop was asked)
    private let state = Lock((requested: false, stopping: false))
    /// The WAL size, in pages, at which a commit asks for a checkpoint at once (SQLite's own default).
    let pages: Int

    /// Opens the second connection and starts the thread. `interval`: the longest time between checkpoints.
    init(path: String, interval: Duration, pages: Int = 1_000) throws(SQLiteError) {
        self.pages = pages
        let connection = try SQLiteConnection(path: path)
        DetachedThread.start(name: "twobits-wal-checkpoint") { [self] in run(connection, interval: interval) }
    }

    /// From the writer's commit (under its connection's lock): asks for a checkpoint once the log is long.
    func committed(logPages: Int) {
        guard logPages >= pages else { return }
        let signal = state.withLock { s -> Bool in
            guard !s.requested, !s.stopping else { return false }
            s.requested = true
            return true
        }
        if signal { wake.signal() }
    }

    /// Stops the thread after its last checkpoint and waits for it (its connection is closed then).
    func stop() {
        let first = state.withLock { s -> Bool in
            defer { s.stopping = true }
            return !s.stopping
        }
        guard first else { return }
        wake.signal()
        finished.wait()
    }

    private func run(_ connection: SQLiteConnection, interval: Duration) {
        let nanoseconds = interval.wholeNanoseconds
        while true {
            _ = wake.wait(timeout: DispatchTime.now() + .nanoseconds(nanoseconds))
            let stopping = state.withLock { s -> Bool in
                s.requested = false
                return s.stopping
            }
            // A failure (file replaced, disk full) leaves the log to grow; readiness reports the ledger itself.
            _ = try? connection.checkpoint()
            if stopping { break }
        }
        finished.signal()
    }
}
