import Locking

/// Runs a table's expiry sweep at most once a second instead of on every insert.
public final class ExpirySweeper: Sendable {
    private let lastSweep = Lock<[String: Int64]>([:])

    public init() {}

    /// Runs `sweep` when `table` was last swept a second or more before `nowMS`; a failed sweep is
    /// retried at the next due time (expired rows only cost space, never a wrong answer).
    public func sweepIfDue<E: Error>(table: String, nowMS: Int64, _ sweep: () throws(E) -> Void) {
        if claimIfDue(table: table, nowMS: nowMS) { try? sweep() }
    }

    /// True, and `table` counted as swept at `nowMS`, when it was last swept a second or more before: the
    /// caller then runs the sweep (for ledgers whose sweep is asynchronous).
    public func claimIfDue(table: String, nowMS: Int64) -> Bool {
        lastSweep.withLock { last -> Bool in
            guard nowMS - (last[table] ?? 0) >= 1_000 else { return false }
            last[table] = nowMS
            return true
        }
    }
}
