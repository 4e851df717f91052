public import FoundationEssentials
public import Ledger

extension PostgresLedger {
    public func rememberDeviceToken(digest: String, until: Date, now: Date) async throws(StorageError) -> Bool {
        try await insertOnce(table: "device_token_uses", column: "digest", value: digest, until: until, now: now, sweepLock: 4)
    }

    public func forgetDeviceToken(digest: String) async throws(StorageError) {
        try await statement("DELETE FROM device_token_uses WHERE digest = $1", [.text(digest)])
    }

    public func consumeTokenID(_ jti: String, until: Date, now: Date) async throws(StorageError) -> Bool {
        try await insertOnce(table: "consumed_token_ids", column: "jti", value: jti, until: until, now: now, sweepLock: 5)
    }

    /// Inserts a key unless a live row holds it; a row whose time has passed counts as absent and is
    /// replaced in the same statement. Concurrent inserts of one key from any replicas: the conflict clause
    /// waits for the first to commit and re-checks the condition on its row, so exactly one returns a row.
    /// Expired rows are swept at most once a second per instance, by one replica at a time.
    func insertOnce(table: String, column: String, value: String, until: Date, now: Date, sweepLock: Int32) async throws(StorageError) -> Bool {
        let nowMS = Self.ms(now)
        let rows = try await statement("""
            INSERT INTO \(table) (\(column), expires_ms) VALUES ($1, $2)
            ON CONFLICT (\(column)) DO UPDATE SET expires_ms = excluded.expires_ms WHERE \(table).expires_ms <= $3
            RETURNING 1 AS inserted
            """, [.text(value), .ms(until), .integer(nowMS)])
        await sweepIfDue(table: table, nowMS: nowMS, lock: sweepLock, "DELETE FROM \(table) WHERE expires_ms <= $1", nowMS)
        return !rows.isEmpty
    }
}
