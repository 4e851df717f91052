public import FoundationEssentials
public import Ledger

extension PostgresLedger {
    static let idempotencyWindow: TimeInterval = 24 * 3600

    /// A new key costs one statement: the insert claims it (`ON CONFLICT DO NOTHING` waits for a racing
    /// replica's insert to commit, so two cannot both get `.started`). A key already there is read
    /// `FOR UPDATE` in a transaction and judged as on SQLite: past the window it counts as absent and is
    /// claimed afresh; a row owned by another process that is still alive (its presence lock is held) is
    /// a twin in progress, not an unfinished attempt to take over.
    public func beginIdempotent(client: String, key: String, requestHash: String, owner: String, now: Date) async throws(StorageError) -> IdempotencyBegin {
        try await presence.ensure(owner)
        let nowMS = Self.ms(now)
        let cutoff = nowMS - Int64(Self.idempotencyWindow * 1000)
        let fresh: [PostgresValue] = [.text(client), .text(key), .text(requestHash), .integer(nowMS), .text(owner)]
        let insert = """
            INSERT INTO idempotency_keys (client, key, request_hash, created_ms, owner) VALUES ($1, $2, $3, $4, $5)
            ON CONFLICT (client, key) DO NOTHING RETURNING 1 AS inserted
            """
        let begin: IdempotencyBegin
        if try await !statement(insert, fresh).isEmpty {
            begin = .started
        } else {
            begin = try await run { db throws(PostgresError) -> IdempotencyBegin in
                try db.transaction { db throws(PostgresError) -> IdempotencyBegin in
                    // A row that vanishes between the insert and the read (abandoned) is claimed by inserting again.
                    for _ in 0..<5 {
                        guard let row = try db.query("""
                            SELECT request_hash, status, body, intent, owner, created_ms,
                                   owner IS NOT NULL AND owner <> $3 AND twobits_owner_alive(owner) AS alive
                            FROM idempotency_keys WHERE client = $1 AND key = $2 FOR UPDATE
                            """, [.text(client), .text(key), .text(owner)]).first else {
                            if try !db.query(insert, fresh).isEmpty { return .started }
                            continue
                        }
                        if (row.int64("created_ms") ?? 0) < cutoff {
                            try db.query("""
                                UPDATE idempotency_keys SET request_hash = $3, created_ms = $4, owner = $5, intent = NULL, status = NULL, body = NULL
                                WHERE client = $1 AND key = $2
                                """, fresh)
                            return .started
                        }
                        guard row.string("request_hash") == requestHash else { return .conflict }
                        if let status = row.int("status") { return .replay(status: status, body: row.bytes("body") ?? Data()) }
                        if row.string("owner") == owner || row.bool("alive") == true { return .inProgress }
                        try db.query("UPDATE idempotency_keys SET owner = $1 WHERE client = $2 AND key = $3", [.text(owner), .text(client), .text(key)])
                        return .unfinished(intent: row.string("intent"))
                    }
                    // Claimed and given back five times over during this call: let the pool run it again.
                    throw PostgresError(sqlState: "40001", message: "the idempotency key kept changing")
                }
            }
        }
        // Keys past the window, swept at most once a second per instance and by one replica at a time.
        await sweepIfDue(table: "idempotency_keys", nowMS: nowMS, lock: 3, "DELETE FROM idempotency_keys WHERE created_ms < $1", cutoff)
        return begin
    }

    /// Runs `delete` (`sweep`) when this instance last swept `table` a second or more ago; a failure waits
    /// for the next due time (expired rows only cost space, never a wrong answer).
    func sweepIfDue(table: String, nowMS: Int64, lock: Int32, _ delete: String, _ bound: Int64) async {
        guard sweeper.claimIfDue(table: table, nowMS: nowMS) else { return }
        _ = try? await run { db throws(PostgresError) in try Self.sweep(db, lock: lock, delete, bound) }
    }

    /// Runs `delete` under a transaction-level advisory lock when no other replica holds it; skips otherwise.
    static func sweep(_ db: PostgresConnection, lock: Int32, _ delete: String, _ bound: Int64) throws(PostgresError) {
        try db.transaction { db throws(PostgresError) in
            let got = try db.query("SELECT pg_try_advisory_xact_lock(\(PostgresMigrations.lockNamespace), \(lock)) AS got").first?.bool("got") ?? false
            if got { try db.query(delete, [.integer(bound)]) }
        }
    }

    public func recordIntent(client: String, key: String, intent: String) async throws(StorageError) {
        try await statement("UPDATE idempotency_keys SET intent = $1 WHERE client = $2 AND key = $3", [.text(intent), .text(client), .text(key)])
    }

    public func completeIdempotent(client: String, key: String, status: Int, body: Data) async throws(StorageError) {
        try await statement("UPDATE idempotency_keys SET status = $1, body = $2 WHERE client = $3 AND key = $4",
                            [.int(status), .bytea(body), .text(client), .text(key)])
    }

    public func abandonIdempotent(client: String, key: String) async throws(StorageError) {
        // One statement, one round trip: the two touch disjoint rows (with and without an intent), as
        // SQLite's delete-then-update does.
        try await statement("""
            WITH forgotten AS (DELETE FROM idempotency_keys WHERE client = $1 AND key = $2 AND status IS NULL AND intent IS NULL)
            UPDATE idempotency_keys SET owner = NULL WHERE client = $1 AND key = $2 AND status IS NULL AND intent IS NOT NULL
            """, [.text(client), .text(key)])
    }
}
