public import Foundation
public import Ledger

extension PostgresLedger {
    static let idempotencyWindow: TimeInterval = 24 * 3600

    /// One transaction: the insert claims the key (`ON CONFLICT DO NOTHING` waits for a racing replica's
    /// insert to commit, so two cannot both get `.started`); otherwise the row is read `FOR UPDATE` and
    /// judged as on SQLite, except that a row owned by another process that is still alive (its presence
    /// lock is held) is a twin in progress, not an unfinished attempt to take over.
    public func beginIdempotent(client: String, key: String, requestHash: String, owner: String, now: Date) async throws(StorageError) -> IdempotencyBegin {
        try await presence.ensure(owner)
        let nowMS = Self.ms(now)
        let cutoff = nowMS - Int64(Self.idempotencyWindow * 1000)
        let sweeper = self.sweeper
        return try await run { db throws(PostgresError) -> IdempotencyBegin in
            let begin = try db.transaction { db throws(PostgresError) -> IdempotencyBegin in
                // This key's own expired row counts as absent at once; the sweep of the others is shared (below).
                try db.query("DELETE FROM idempotency_keys WHERE client = $1 AND key = $2 AND created_ms < $3", [.text(client), .text(key), .integer(cutoff)])
                let inserted = try db.query("""
                    INSERT INTO idempotency_keys (client, key, request_hash, created_ms, owner) VALUES ($1, $2, $3, $4, $5)
                    ON CONFLICT (client, key) DO NOTHING RETURNING 1 AS inserted
                    """, [.text(client), .text(key), .text(requestHash), .integer(nowMS), .text(owner)])
                if !inserted.isEmpty { return .started }
                guard let row = try db.query("""
                    SELECT request_hash, status, body, intent, owner, owner IS NOT NULL AND owner <> $3 AND twobits_owner_alive(owner) AS alive
                    FROM idempotency_keys WHERE client = $1 AND key = $2 FOR UPDATE
                    """, [.text(client), .text(key), .text(owner)]).first else {
                    // Deleted between the insert and the read (abandoned): claim it now.
                    try db.query("INSERT INTO idempotency_keys (client, key, request_hash, created_ms, owner) VALUES ($1, $2, $3, $4, $5)",
                                 [.text(client), .text(key), .text(requestHash), .integer(nowMS), .text(owner)])
                    return .started
                }
                guard row.string("request_hash") == requestHash else { return .conflict }
                if let status = row.int("status") { return .replay(status: status, body: row.bytes("body") ?? Data()) }
                if row.string("owner") == owner || row.bool("alive") == true { return .inProgress }
                try db.query("UPDATE idempotency_keys SET owner = $1 WHERE client = $2 AND key = $3", [.text(owner), .text(client), .text(key)])
                return .unfinished(intent: row.string("intent"))
            }
            // Keys past the window, swept at most once a second per instance and by one replica at a time.
            sweeper.sweepIfDue(table: "idempotency_keys", nowMS: nowMS) { () throws(PostgresError) in
                try Self.sweep(db, lock: 3, "DELETE FROM idempotency_keys WHERE created_ms < $1", cutoff)
            }
            return begin
        }
    }

    /// Runs `delete` under a transaction-level advisory lock when no other replica holds it; skips otherwise.
    static func sweep(_ db: PostgresConnection, lock: Int32, _ delete: String, _ bound: Int64) throws(PostgresError) {
        try db.transaction { db throws(PostgresError) in
            let got = try db.query("SELECT pg_try_advisory_xact_lock(\(PostgresMigrations.lockNamespace), \(lock)) AS got").first?.bool("got") ?? false
            if got { try db.query(delete, [.integer(bound)]) }
        }
    }

    public func recordIntent(client: String, key: String, intent: String) async throws(StorageError) {
        try await run { db throws(PostgresError) in
            try db.query("UPDATE idempotency_keys SET intent = $1 WHERE client = $2 AND key = $3", [.text(intent), .text(client), .text(key)])
        }
    }

    public func completeIdempotent(client: String, key: String, status: Int, body: Data) async throws(StorageError) {
        try await run { db throws(PostgresError) in
            try db.query("UPDATE idempotency_keys SET status = $1, body = $2 WHERE client = $3 AND key = $4",
                         [.int(status), .bytea(body), .text(client), .text(key)])
        }
    }

    public func abandonIdempotent(client: String, key: String) async throws(StorageError) {
        try await run { db throws(PostgresError) in
            try db.transaction { db throws(PostgresError) in
                try db.query("DELETE FROM idempotency_keys WHERE client = $1 AND key = $2 AND status IS NULL AND intent IS NULL", [.text(client), .text(key)])
                try db.query("UPDATE idempotency_keys SET owner = NULL WHERE client = $1 AND key = $2 AND status IS NULL", [.text(client), .text(key)])
            }
        }
    }
}
