import Locking

/// Runs a table's expiry sweep at most once a second instead of on every insert.
final class ExpirySweeper: Sendable {
    private let lastSweep = Lock<[String: Int64]>([:])

    func sweepIfDue(table: String, nowMS: Int64, _ sweep: () throws(SQLiteError) -> Void) {
        let due = lastSweep.withLock { last -> Bool in
            guard nowMS - (last[table] ?? 0) >= 1_000 else { return false }
            last[table] = nowMS
            return true
        }
        if due { try? sweep() }
    }
}
