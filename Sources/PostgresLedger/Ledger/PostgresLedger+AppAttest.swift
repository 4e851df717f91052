public import FoundationEssentials
public import Ledger

extension PostgresLedger {
    public func issueAppAttestChallenge(digest: String, until: Date, now: Date) async throws(StorageError) -> Bool {
        try await insertOnce(table: "app_attest_challenges", column: "digest", value: digest, until: until, now: now, sweepLock: 6)
    }

    /// The DELETE takes the row's lock: of replicas consuming one challenge at once, one deletes it and the
    /// others, re-checking after its commit, find nothing.
    public func consumeAppAttestChallenge(digest: String, now: Date) async throws(StorageError) -> Bool {
        try await run { db throws(PostgresError) -> Bool in
            try !db.query("DELETE FROM app_attest_challenges WHERE digest = $1 AND expires_ms > $2 RETURNING 1 AS used",
                          [.text(digest), .ms(now)]).isEmpty
        }
    }

    public func storeAppAttestKey(_ key: AppAttestKeyRecord) async throws(StorageError) -> Bool {
        try await run { db throws(PostgresError) -> Bool in
            try !db.query("""
                INSERT INTO app_attest_keys (key_id, public_key, counter, receipt, environment, app_id, validation_category,
                                             first_seen_ms, revoked_ms, revoked_reason)
                VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT (key_id) DO NOTHING RETURNING 1 AS stored
                """, [.text(key.keyID), .bytea(key.publicKey), .integer(Int64(key.counter)), .bytea(key.receipt), .text(key.environment.rawValue),
                      .text(key.appID), key.validationCategory.map { .int($0) } ?? .null, .ms(key.firstSeen),
                      key.revokedAt.map { .ms($0) } ?? .null, .optional(key.revokedReason)]).isEmpty
        }
    }

    public func appAttestKey(id: String) async throws(StorageError) -> AppAttestKeyRecord? {
        try await run { db throws(PostgresError) in try db.query("SELECT * FROM app_attest_keys WHERE key_id = $1", [.text(id)]) }
            .records(AppAttestKeyRecord.init(row:)).first
    }

    /// The UPDATE's WHERE is re-checked on the row after a concurrent writer commits (READ COMMITTED), so of
    /// replicas racing with one counter exactly one updates it.
    public func advanceAppAttestCounter(keyID: String, to counter: UInt32, now: Date) async throws(StorageError) -> CounterAdvance {
        try await run { db throws(PostgresError) -> CounterAdvance in
            let updated = try db.query("""
                UPDATE app_attest_keys SET counter = $1, last_used_ms = $3 WHERE key_id = $2 AND counter < $1 AND revoked_ms IS NULL RETURNING 1 AS advanced
                """, [.integer(Int64(counter)), .text(keyID), .ms(now)])
            if !updated.isEmpty { return .advanced }
            guard let row = try db.query("SELECT counter, revoked_ms FROM app_attest_keys WHERE key_id = $1", [.text(keyID)]).first else {
                return .unknownKey
            }
            if row.int64("revoked_ms") != nil { return .revoked }
            return .notIncreasing(stored: UInt32(row.int64("counter") ?? 0))
        }
    }

    public func revokeAppAttestKey(keyID: String, reason: String, now: Date, audit: AuditEvent) async throws(StorageError) -> Bool {
        try await run { db throws(PostgresError) -> Bool in
            try db.transaction { tx throws(PostgresError) -> Bool in
                guard try Self.revoke(keyID: keyID, reason: reason, now: now, in: tx) else { return false }
                try tx.query("INSERT INTO audit_events (\(Self.auditColumns)) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)", Self.values(audit))
                return true
            }
        }
    }

    private static func revoke(keyID: String, reason: String, now: Date, in db: PostgresConnection) throws(PostgresError) -> Bool {
        try !db.query("""
            UPDATE app_attest_keys SET revoked_ms = coalesce(revoked_ms, $1), revoked_reason = coalesce(revoked_reason, $2)
            WHERE key_id = $3 RETURNING 1 AS revoked
            """, [.ms(now), .text(reason), .text(keyID)]).isEmpty
    }
}
