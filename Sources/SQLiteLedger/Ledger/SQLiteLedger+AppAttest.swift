public import FoundationEssentials
public import Ledger

extension SQLiteLedger {
    public func issueAppAttestChallenge(digest: String, until: Date, now: Date) async throws(StorageError) -> Bool {
        try await insertOnce(table: "app_attest_challenges", column: "digest", value: digest, until: until, now: now)
    }

    public func consumeAppAttestChallenge(digest: String, now: Date) async throws(StorageError) -> Bool {
        try await run { (db) throws(SQLiteError) -> Bool in
            try db.change("DELETE FROM app_attest_challenges WHERE digest = ? AND expires_ms > ?",
                          [.text(digest), .integer(Self.ms(now))]) == 1
        }
    }

    public func storeAppAttestKey(_ key: AppAttestKeyRecord) async throws(StorageError) -> Bool {
        try await run { (db) throws(SQLiteError) -> Bool in
            try db.change("""
                INSERT INTO app_attest_keys (key_id, public_key, counter, receipt, environment, app_id, validation_category,
                                             first_seen_ms, revoked_ms, revoked_reason)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(key_id) DO NOTHING
                """, [.text(key.keyID), .blob(key.publicKey), .integer(Int64(key.counter)), .blob(key.receipt), .text(key.environment.rawValue),
                      .text(key.appID), key.validationCategory.map { .integer(Int64($0)) } ?? .null, .integer(Self.ms(key.firstSeen)),
                      key.revokedAt.map { .integer(Self.ms($0)) } ?? .null, key.revokedReason.map { .text($0) } ?? .null]) == 1
        }
    }

    public func appAttestKey(id: String) async throws(StorageError) -> AppAttestKeyRecord? {
        try await run { (db) throws(SQLiteError) in try db.query("SELECT * FROM app_attest_keys WHERE key_id = ?", [.text(id)]) }.records(AppAttestKeyRecord.init(row:)).first
    }

    public func advanceAppAttestCounter(keyID: String, to counter: UInt32, now: Date) async throws(StorageError) -> CounterAdvance {
        try await run { (db) throws(SQLiteError) -> CounterAdvance in
            try db.transaction { tx throws(SQLiteError) -> CounterAdvance in
                // One statement decides: SQLite serialises writers, so of two racers only one sees the old counter.
                try tx.query("UPDATE app_attest_keys SET counter = ?, last_used_ms = ? WHERE key_id = ? AND counter < ? AND revoked_ms IS NULL",
                             [.integer(Int64(counter)), .integer(Self.ms(now)), .text(keyID), .integer(Int64(counter))])
                if tx.changes == 1 { return .advanced }
                guard let row = try tx.query("SELECT counter, revoked_ms FROM app_attest_keys WHERE key_id = ?", [.text(keyID)]).first else {
                    return .unknownKey
                }
                if row.int("revoked_ms") != nil { return .revoked }
                return .notIncreasing(stored: UInt32(row.int("counter") ?? 0))
            }
        }
    }

    public func revokeAppAttestKey(keyID: String, reason: String, now: Date, audit: AuditEvent) async throws(StorageError) -> Bool {
        try await run { (db) throws(SQLiteError) -> Bool in
            try db.transaction { tx throws(SQLiteError) -> Bool in
                guard try Self.revoke(keyID: keyID, reason: reason, now: now, in: tx) else { return false }
                try tx.query("""
                    INSERT INTO audit_events (at_ms, client, action, subject, bits_before, bits_after, result, reason, transaction_id, token_prefix, intent_id)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """, Self.values(audit))
                return true
            }
        }
    }

    private static func revoke(keyID: String, reason: String, now: Date, in tx: SQLiteTransaction) throws(SQLiteError) -> Bool {
        try tx.query("""
            UPDATE app_attest_keys SET revoked_ms = coalesce(revoked_ms, ?), revoked_reason = coalesce(revoked_reason, ?)
            WHERE key_id = ?
            """, [.integer(Self.ms(now)), .text(reason), .text(keyID)])
        return tx.changes == 1
    }

    static func ms(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1000).rounded()) }
}
