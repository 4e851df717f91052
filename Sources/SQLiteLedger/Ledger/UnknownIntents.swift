import Locking

/// Whether the file may hold a write intent whose outcome is `unknown`.
///
/// `unknownWriteIntents` is asked before every write to Apple and nearly always finds none; while this says
/// none can exist it answers without a query. One process uses a SQLite file, so this ledger sees every
/// intent that becomes unknown: the flag is raised inside the transaction that makes one (under the
/// connection's lock), and lowered only by a check that finds none under the same lock, so a raise can
/// never be lost to a check running beside it. A raise whose transaction rolls back only costs queries.
final class UnknownIntents: Sendable {
    private let flag = Lock(true)

    /// False only when no intent can be `unknown`.
    var mayExist: Bool { flag.withLock { $0 } }

    /// From inside a transaction that makes an intent `unknown`.
    func raise() { flag.withLock { $0 = true } }

    /// Whether an unresolved intent is `unknown`. While one is, this runs after every resolution: it must
    /// not read the whole audit trail (`audit_events_unknown`, schema version 9, lets it read only the
    /// unknown events; without it each claim scanned every event: Benchmarks/HISTORY.md, 2026-12-02).
    static let presence = """
        SELECT EXISTS (SELECT 1 FROM write_intents w JOIN audit_events a ON a.intent_id = w.intent_id
                       WHERE a.result = 'unknown') AS present
        """

    /// Lowers the flag if no unresolved intent in the file is `unknown` (at open, and after a resolution).
    func lowerIfNone(in db: SQLiteConnection) {
        guard mayExist else { return }
        db.lock.withLock {
            let rows = try? db.run(Self.presence, [])
            if rows?.first?.int("present") == 0 { flag.withLock { $0 = false } }
        }
    }
}
