public import FoundationEssentials
public import Ledger
import EventLoops
import Locking
import Mechanisms

/// The embedded ledger: one SQLite file in WAL mode, schema migrated at open.
///
/// Calls made on an event loop run on the ledger's own thread (`LedgerThread`), so that a slow or stalled
/// disk never stops a loop; the hot writes made on a loop are committed together, once per loop turn
/// (`GroupCommit`). Calls made off a loop (tools, tests, start-up) run inline, on the caller's thread. The
/// WAL checkpoints, which fsync, run on a thread of their own (`WALCheckpointer`).
public final class SQLiteLedger: Ledger {
    let db: SQLiteConnection
    /// Runs the calls made on the loops.
    let thread: LedgerThread
    /// How long `/readyz`'s probe waits for the ledger thread before it says not ready.
    let probeTimeout: Duration
    /// The hot writes (reuse records, audit events, write intents), committed together per loop turn.
    let groupCommit: GroupCommit
    /// Lets `unknownWriteIntents` skip its query while no intent can be `unknown`.
    let unknownIntents = UnknownIntents()
    /// This ledger instance, as the taker of pending orders (`claimPendingAction`).
    let instance = "sqlite-" + UUID().uuidString
    /// Nil for an in-memory database, or when SQLite's automatic (inline) checkpoints were asked for.
    private let checkpointer: WALCheckpointer?
    private let sweeper = ExpirySweeper()
    /// The last readiness probe's verdict, reused for `healthProbeInterval` (see `init`).
    let lastProbe: HealthVerdictCache
    /// Told each call's duration (the ledger latency metric); nil when nobody measures.
    let observer: (any LedgerCallObserver)?

    /// Opens or creates the file and applies pending migrations. `healthProbeInterval`: how long the
    /// verdict of `checkHealth`'s write probe is reused. `checkpointInterval`: the longest time between
    /// two background checkpoints (one also starts when the log reaches 1000 pages); nil leaves
    /// checkpoints to SQLite, inline in the commit that crosses 1000 pages (for comparison in the benchmark).
    /// `stallLimit`: how long one call may hold the ledger thread before the disk counts as stalled (then
    /// calls made on the loops are refused at once, and the readiness probe gives up after as long).
    public init(path: String, healthProbeInterval: Duration = .seconds(2), checkpointInterval: Duration? = .seconds(1),
                stallLimit: Duration = .seconds(2), observer: (any LedgerCallObserver)? = nil) throws(StorageError) {
        lastProbe = HealthVerdictCache(interval: healthProbeInterval)
        self.observer = observer
        probeTimeout = stallLimit
        let thread = LedgerThread(stallLimit: stallLimit)
        self.thread = thread
        do throws(SQLiteError) {
            db = try SQLiteConnection(path: path)
            groupCommit = GroupCommit(db: db, thread: thread)
            try SchemaMigrations.apply(to: db)
            unknownIntents.lowerIfNone(in: db)
            if let checkpointInterval, !SQLiteConnection.isMemory(path) {
                let checkpointer = try WALCheckpointer(path: path, interval: checkpointInterval)
                self.checkpointer = checkpointer
                do throws(SQLiteError) { try db.onWALCommit { pages in checkpointer.committed(logPages: pages) } } catch {
                    checkpointer.stop()
                    throw error
                }
            } else {
                checkpointer = nil
            }
        } catch {
            thread.stop()
            throw StorageError(error)
        }
    }

    /// Stops the ledger thread (after its queued calls) and the checkpoint thread (after a last checkpoint);
    /// the connection closes when the ledger goes.
    deinit {
        thread.stop()
        checkpointer?.stop()
    }

    /// The schema version now in the file.
    public var schemaVersion: Int { (try? db.query("PRAGMA user_version").first?.int("user_version")) ?? 0 }

    /// Runs `body` on the ledger thread when called on an event loop (a loop must never wait for the
    /// disk), inline otherwise; timed for the ledger latency metric.
    @discardableResult
    func run<T: Sendable>(_ body: @escaping @Sendable (SQLiteConnection) throws(SQLiteError) -> T) async throws(StorageError) -> T {
        let start = callStarted()
        defer { callFinished(start) }
        do { return try await offLoop(body) } catch { throw failed(error) }
    }

    /// `body` on the ledger thread when called on an event loop, inline otherwise.
    func offLoop<T: Sendable>(_ body: @escaping @Sendable (SQLiteConnection) throws(SQLiteError) -> T) async throws(SQLiteError) -> T {
        let db = db
        guard EventLoop.current != nil else { return try body(db) }
        let outcome = await withCheckedContinuation { (continuation: CheckedContinuation<Result<T, SQLiteError>, Never>) in
            let refusal = thread.submit {
                do throws(SQLiteError) { continuation.resume(returning: .success(try body(db))) } catch {
                    continuation.resume(returning: .failure(error))
                }
            }
            if let refusal { continuation.resume(returning: .failure(refusal)) }
        }
        return try outcome.get()
    }

    /// `body` on the ledger thread, not awaited, when called on an event loop (housekeeping nobody waits
    /// for; dropped while the disk is stalled), inline otherwise.
    func offLoopDetached(_ body: @escaping @Sendable (SQLiteConnection) -> Void) {
        let db = db
        guard EventLoop.current != nil else { return body(db) }
        _ = thread.submit { body(db) }
    }

    /// Runs `body` through the group commit (see `GroupCommit`), timed like `run`.
    func write<T: Sendable>(_ body: @escaping (SQLiteTransaction) throws(SQLiteError) -> T) async throws(StorageError) -> T {
        let start = callStarted()
        defer { callFinished(start) }
        do { return try await groupCommit.write(body) } catch { throw failed(error) }
    }

    /// The error for a failed call; one the store itself caused makes it not ready for a while, whatever
    /// the probe says (`HealthVerdictCache`): on a full disk the probe's upsert still fits.
    func failed(_ error: SQLiteError) -> StorageError {
        let storageError = StorageError(error)
        if storageError.storeFault { lastProbe.realWriteFailed(storageError) }
        return storageError
    }

    /// The ledger latency metric's clock: read only when somebody measures.
    private func callStarted() -> ContinuousClock.Instant? { observer == nil ? nil : ContinuousClock.now }

    private func callFinished(_ start: ContinuousClock.Instant?) {
        if let start, let observer { observer.ledgerCallFinished(seconds: (ContinuousClock.now - start).inSeconds) }
    }

    /// How the group commit has grouped the hot writes so far.
    public var groupCommitStatistics: GroupCommitStatistics { groupCommit.statistics }

    // MARK: Audit

    @discardableResult
    public func record(_ event: AuditEvent) async throws(StorageError) -> Int64 {
        let values = Self.values(event)
        // The rowid, not `RETURNING id` (see `SQLiteConnection.change`).
        return try await write { tx throws(SQLiteError) in
            try tx.query("""
                INSERT INTO audit_events (at_ms, client, action, subject, bits_before, bits_after, result, reason, transaction_id, token_prefix, intent_id)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """, values)
            return tx.lastInsertRowID
        }
    }

    static func values(_ event: AuditEvent) -> [SQLiteValue] {
        [.integer(Int64((event.at.timeIntervalSince1970 * 1000).rounded())), .text(event.client), .text(event.action),
         .optional(event.subject), .optional(event.bitsBefore?.description), .optional(event.bitsAfter?.description), .text(event.result.rawValue),
         .optional(event.reason), .optional(event.transactionID), .optional(event.tokenPrefix), .optional(event.intentID)]
    }

    public func auditEvent(id: Int64) async throws(StorageError) -> AuditEvent? {
        try await run { (db) throws(SQLiteError) in try db.query("SELECT * FROM audit_events WHERE id = ?", [.integer(id)]) }.records(AuditEvent.init(row:)).first
    }

    /// Every event, newest first.
    public func auditEvents(limit: Int, before: Int64?) async throws(StorageError) -> [AuditEvent] {
        try await auditEvents(limit: limit, before: before, filter: AuditFilter())
    }

    public func auditEvents(limit: Int, before: Int64?, filter: AuditFilter) async throws(StorageError) -> [AuditEvent] {
        @Sendable func text(_ s: String?) -> SQLiteValue { s.map { .text($0) } ?? .null }
        @Sendable func ms(_ d: Date?) -> SQLiteValue { d.map { .integer(Self.ms($0)) } ?? .null }
        // One statement for every filter (a nil parameter matches all), so it is prepared once.
        let rows = try await run { (db) throws(SQLiteError) in
            try db.query("""
                SELECT * FROM audit_events WHERE id < ?1 AND (?3 IS NULL OR action = ?3) AND (?4 IS NULL OR client = ?4)
                  AND (?5 IS NULL OR result = ?5) AND (?6 IS NULL OR at_ms >= ?6) AND (?7 IS NULL OR at_ms < ?7)
                  AND (?8 IS NULL OR subject = ?8) AND (?9 IS NULL OR token_prefix = ?9)
                ORDER BY id DESC LIMIT ?2
                """, [.integer(before ?? Int64.max), .int(max(1, min(limit, 1000))), text(filter.action), text(filter.client),
                      text(filter.result?.rawValue), ms(filter.since), ms(filter.until), text(filter.installID), text(filter.tokenPrefix)])
        }
        return try rows.records(AuditEvent.init(row:))
    }

    // MARK: Write intents

    public func recordWriteIntent(_ intent: WriteIntent) async throws(StorageError) {
        var event = intent.event
        event.intentID = intent.id
        let values = Self.values(event)
        try await write { tx throws(SQLiteError) in
                try tx.query("""
                    INSERT INTO audit_events (at_ms, client, action, subject, bits_before, bits_after, result, reason, transaction_id, token_prefix, intent_id)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """, values)
                try tx.query("INSERT INTO write_intents (intent_id, token_prefix, bits, month, success_result, created_ms) VALUES (?, ?, ?, ?, ?, ?)",
                             [.text(intent.id), .text(intent.tokenPrefix), .text(intent.bits.description), .text(intent.month.description), .text(intent.successResult.rawValue),
                              .integer(Int64((event.at.timeIntervalSince1970 * 1000).rounded()))])
        }
    }

    public func resolveWriteIntent(id: String, result: AuditResult, bitsAfter: BitsSnapshot?, reason: String?, transactionID: String?) async throws(StorageError) {
        let unknownIntents = unknownIntents
        try await write { tx throws(SQLiteError) in
                if result == .unknown { unknownIntents.raise() }
                try tx.query("""
                    UPDATE audit_events SET result = ?, bits_after = ?, reason = ?, transaction_id = ?
                    WHERE intent_id = ? AND result IN ('pending', 'unknown')
                    """, [.text(result.rawValue), .optional(bitsAfter?.description), .optional(reason), .optional(transactionID), .text(id)])
                if result != .unknown { try tx.query("DELETE FROM write_intents WHERE intent_id = ?", [.text(id)]) }
        }
        // This may have settled the last unknown intent.
        if result != .unknown, unknownIntents.mayExist { offLoopDetached { db in unknownIntents.lowerIfNone(in: db) } }
    }

    public func unknownWriteIntents(tokenPrefix: String, limit: Int) async throws(StorageError) -> [WriteIntent] {
        guard unknownIntents.mayExist else { return [] }
        let rows = try await write { tx throws(SQLiteError) in
            try tx.query("""
                SELECT a.*, w.token_prefix AS intent_token_prefix, w.bits, w.month, w.success_result FROM write_intents w
                JOIN audit_events a ON a.intent_id = w.intent_id
                WHERE w.token_prefix = ? AND a.result = 'unknown'
                ORDER BY a.id LIMIT ?
                """, [.text(tokenPrefix), .int(max(1, limit))])
        }
        return try rows.records(WriteIntent.init(row:))
    }

    public func markInterruptedWriteIntents(reason: String) async throws(StorageError) -> Int {
        let unknownIntents = unknownIntents
        let marked = try await run { (db) throws(SQLiteError) -> Int in
            try db.transaction { tx throws(SQLiteError) -> Int in
                unknownIntents.raise()
                try tx.query("""
                    UPDATE audit_events SET result = 'unknown', reason = CASE WHEN reason IS NULL THEN ? ELSE reason || '; ' || ? END
                    WHERE result = 'pending' AND intent_id IS NOT NULL
                    """, [.text(reason), .text(reason)])
                return tx.changes
            }
        }
        // Raised above whatever it found (a raise is never lost to a check beside it); lowered again when
        // the file holds no unknown intent, or every request would ask for them until the next write settles one.
        offLoopDetached { db in unknownIntents.lowerIfNone(in: db) }
        return marked
    }

    // MARK: Idempotency

    static let idempotencyWindow: TimeInterval = 24 * 3600

    public func beginIdempotent(client: String, key: String, requestHash: String, owner: String, now: Date) async throws(StorageError) -> IdempotencyBegin {
        let nowMS = Int64((now.timeIntervalSince1970 * 1000).rounded())
        let cutoff = nowMS - Int64(Self.idempotencyWindow * 1000)
        return try await run { (db) throws(SQLiteError) -> IdempotencyBegin in
            try db.transaction { tx throws(SQLiteError) -> IdempotencyBegin in
                try tx.query("DELETE FROM idempotency_keys WHERE created_ms < ?", [.integer(cutoff)])
                if let row = try tx.query("SELECT * FROM idempotency_keys WHERE client = ? AND key = ?", [.text(client), .text(key)]).first {
                    guard row.string("request_hash") == requestHash else { return .conflict }
                    if let status = row.int("status") { return .replay(status: status, body: row.blob("body") ?? Data()) }
                    if row.string("owner") == owner { return .inProgress }
                    try tx.query("UPDATE idempotency_keys SET owner = ? WHERE client = ? AND key = ?", [.text(owner), .text(client), .text(key)])
                    return .unfinished(intent: row.string("intent"))
                }
                try tx.query("INSERT INTO idempotency_keys (client, key, request_hash, created_ms, owner) VALUES (?, ?, ?, ?, ?)",
                             [.text(client), .text(key), .text(requestHash), .integer(nowMS), .text(owner)])
                return .started
            }
        }
    }

    public func recordIntent(client: String, key: String, intent: String) async throws(StorageError) {
        try await run { (db) throws(SQLiteError) in
            try db.query("UPDATE idempotency_keys SET intent = ? WHERE client = ? AND key = ?", [.text(intent), .text(client), .text(key)])
        }
    }

    public func completeIdempotent(client: String, key: String, status: Int, body: Data) async throws(StorageError) {
        try await run { (db) throws(SQLiteError) in
            try db.query("UPDATE idempotency_keys SET status = ?, body = ? WHERE client = ? AND key = ?",
                         [.int(status), .blob(body), .text(client), .text(key)])
        }
    }

    public func abandonIdempotent(client: String, key: String) async throws(StorageError) {
        try await run { (db) throws(SQLiteError) in
            try db.transaction { tx throws(SQLiteError) in
                try tx.query("DELETE FROM idempotency_keys WHERE client = ? AND key = ? AND status IS NULL AND intent IS NULL", [.text(client), .text(key)])
                try tx.query("UPDATE idempotency_keys SET owner = NULL WHERE client = ? AND key = ? AND status IS NULL", [.text(client), .text(key)])
            }
        }
    }

    // MARK: Pending bans

    public func orderPendingAction(_ action: PendingDeviceAction, audit: AuditEvent) async throws(StorageError) {
        try await run { (db) throws(SQLiteError) in
            try db.transaction { tx throws(SQLiteError) in
                try Self.setPendingAction(action, in: tx)
                try tx.query("""
                    INSERT INTO audit_events (at_ms, client, action, subject, bits_before, bits_after, result, reason, transaction_id, token_prefix, intent_id)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """, Self.values(audit))
            }
        }
    }

    private static func setPendingAction(_ action: PendingDeviceAction, in tx: SQLiteTransaction) throws(SQLiteError) {
        try tx.query("""
            INSERT INTO pending_actions (install_id, kind, reason, client, created_ms) VALUES (?, ?, ?, ?, ?)
            ON CONFLICT(install_id) DO UPDATE SET kind = excluded.kind, reason = excluded.reason, client = excluded.client, created_ms = excluded.created_ms,
                claimed_by = NULL
            """, [.text(action.installID), .text(action.kind.rawValue), .optional(action.reason), .text(action.client),
                  .integer(Int64((action.createdAt.timeIntervalSince1970 * 1000).rounded()))])
    }

    public func pendingActions() async throws(StorageError) -> [PendingDeviceAction] {
        try await run { (db) throws(SQLiteError) in try db.query("SELECT * FROM pending_actions ORDER BY created_ms DESC") }.records(PendingDeviceAction.init(row:))
    }

    public func pendingAction(installID: String) async throws(StorageError) -> PendingDeviceAction? {
        try await run { (db) throws(SQLiteError) in try db.query("SELECT * FROM pending_actions WHERE install_id = ?", [.text(installID)]) }
            .records(PendingDeviceAction.init(row:)).first
    }

    public func removePendingAction(installID: String) async throws(StorageError) {
        try await run { (db) throws(SQLiteError) in try db.query("DELETE FROM pending_actions WHERE install_id = ?", [.text(installID)]) }
    }

    public func withdrawPendingAction(installID: String,
                                      audit: @escaping @Sendable (PendingDeviceAction) -> AuditEvent) async throws(StorageError) -> PendingDeviceAction? {
        try await run { (db) throws(SQLiteError) -> PendingDeviceAction? in
            try db.transaction { tx throws(SQLiteError) -> PendingDeviceAction? in
                let rows = try tx.query("SELECT * FROM pending_actions WHERE install_id = ?", [.text(installID)])
                let found: PendingDeviceAction?
                do throws(StorageError) { found = try rows.records(PendingDeviceAction.init(row:)).first } catch { throw SQLiteError(code: 1, message: error.message) }
                guard let order = found else { return nil }
                try tx.query("DELETE FROM pending_actions WHERE install_id = ?", [.text(installID)])
                try tx.query("""
                    INSERT INTO audit_events (at_ms, client, action, subject, bits_before, bits_after, result, reason, transaction_id, token_prefix, intent_id)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """, Self.values(audit(order)))
                return order
            }
        }
    }

    /// One process uses a SQLite file: an order taken under another instance id was taken by a process that
    /// has stopped, and is taken over; one taken by this instance is being applied by a twin request.
    public func claimPendingAction(installID: String) async throws(StorageError) -> PendingDeviceAction? {
        let instance = instance
        return try await run { (db) throws(SQLiteError) in
            try db.query("UPDATE pending_actions SET claimed_by = ? WHERE install_id = ? AND (claimed_by IS NULL OR claimed_by <> ?) RETURNING *",
                         [.text(instance), .text(installID), .text(instance)])
        }.records(PendingDeviceAction.init(row:)).first
    }

    public func completePendingAction(installID: String) async throws(StorageError) {
        let instance = instance
        try await run { (db) throws(SQLiteError) in
            try db.query("DELETE FROM pending_actions WHERE install_id = ? AND claimed_by = ?", [.text(installID), .text(instance)])
        }
    }

    public func releasePendingAction(installID: String) async throws(StorageError) {
        let instance = instance
        try await run { (db) throws(SQLiteError) in
            try db.query("UPDATE pending_actions SET claimed_by = NULL WHERE install_id = ? AND claimed_by = ?", [.text(installID), .text(instance)])
        }
    }

    // MARK: Replay protection

    public func rememberDeviceToken(digest: String, until: Date, now: Date) async throws(StorageError) -> Bool {
        try await insertOnce(table: "device_token_uses", column: "digest", value: digest, until: until, now: now)
    }

    public func forgetDeviceToken(digest: String) async throws(StorageError) {
        try await run { (db) throws(SQLiteError) in try db.query("DELETE FROM device_token_uses WHERE digest = ?", [.text(digest)]) }
    }

    public func consumeTokenID(_ jti: String, until: Date, now: Date) async throws(StorageError) -> Bool {
        try await insertOnce(table: "consumed_token_ids", column: "jti", value: jti, until: until, now: now)
    }

    /// Inserts a key unless a live row holds it. A row whose time has passed counts as absent and is
    /// replaced in the same statement; the table is swept of expired rows at most once a second.
    func insertOnce(table: String, column: String, value: String, until: Date, now: Date) async throws(StorageError) -> Bool {
        let nowMS = Int64((now.timeIntervalSince1970 * 1000).rounded())
        let untilMS = Int64((until.timeIntervalSince1970 * 1000).rounded())
        // A row inserted, or an expired one taken over, is one change; a live one is none (no `RETURNING`:
        // see `SQLiteConnection.change`).
        let changed = try await write { tx throws(SQLiteError) in
            try tx.query("""
                INSERT INTO \(table) (\(column), expires_ms) VALUES (?, ?)
                ON CONFLICT(\(column)) DO UPDATE SET expires_ms = excluded.expires_ms WHERE \(table).expires_ms <= ?
                """, [.text(value), .integer(untilMS), .integer(nowMS)])
            return tx.changes
        }
        sweeper.sweepIfDue(table: table, nowMS: nowMS) {
            offLoopDetached { db in _ = try? db.query(Self.sweep(table), [.integer(nowMS)]) }
        }
        return changed == 1
    }

    /// The sweep of `table`'s expired rows (each such table has an index on `expires_ms`).
    static func sweep(_ table: String) -> String { "DELETE FROM \(table) WHERE expires_ms <= ?" }

    // MARK: Debug secrets

    public func addDebugSecret(name: String, digest: String, now: Date) async throws(StorageError) -> Bool {
        try await run { (db) throws(SQLiteError) -> Bool in
            try db.transaction { tx throws(SQLiteError) -> Bool in
                try tx.query("INSERT OR IGNORE INTO debug_secrets (name, digest, created_ms) VALUES (?, ?, ?)",
                             [.text(name), .text(digest), .integer(Int64((now.timeIntervalSince1970 * 1000).rounded()))])
                return tx.changes == 1
            }
        }
    }

    public func debugSecretNames() async throws(StorageError) -> [(name: String, createdAt: Date)] {
        try await run { (db) throws(SQLiteError) in try db.query("SELECT name, created_ms FROM debug_secrets ORDER BY name") }.map {
            ($0.string("name") ?? "", Date(timeIntervalSince1970: Double($0.int("created_ms") ?? 0) / 1000))
        }
    }

    public func deleteDebugSecret(name: String) async throws(StorageError) -> Bool {
        try await run { (db) throws(SQLiteError) -> Bool in
            try db.transaction { tx throws(SQLiteError) -> Bool in
                try tx.query("DELETE FROM debug_secrets WHERE name = ?", [.text(name)])
                return tx.changes == 1
            }
        }
    }

    public func debugSecretName(digest: String) async throws(StorageError) -> String? {
        try await run { (db) throws(SQLiteError) in try db.query("SELECT name FROM debug_secrets WHERE digest = ?", [.text(digest)]) }.first?.string("name")
    }

    // MARK: Signing keys

    public func recordKeyActivation(kid: String, at: Date) async throws(StorageError) {
        try await run { (db) throws(SQLiteError) in
            try db.query("""
                INSERT INTO key_activations (kid, activated_ms) VALUES (?, ?)
                ON CONFLICT(kid) DO UPDATE SET activated_ms = max(activated_ms, excluded.activated_ms)
                """, [.text(kid), .integer(Int64((at.timeIntervalSince1970 * 1000).rounded()))])
        }
    }

    public func keyActivations() async throws(StorageError) -> [String: Date] {
        let rows = try await run { (db) throws(SQLiteError) in try db.query("SELECT kid, activated_ms FROM key_activations") }
        var result: [String: Date] = [:]
        for row in rows { result[row.string("kid") ?? ""] = Date(timeIntervalSince1970: Double(row.int("activated_ms") ?? 0) / 1000) }
        return result
    }
}
