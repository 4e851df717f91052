public import FoundationEssentials
public import Ledger

extension SQLiteLedger {
    /// One UPDATE picks and leases the keys: SQLite serialises writers, so two callers never lease one key.
    public func leaseDueReceipts(owner: String, until: Date, activeSince: Date, now: Date, limit: Int) async throws(StorageError) -> [AppAttestKeyRecord] {
        try await run { (db) throws(SQLiteError) in
            try db.query("""
                UPDATE app_attest_keys SET lease_owner = ?, lease_until_ms = ? WHERE key_id IN (
                    SELECT key_id FROM app_attest_keys
                    WHERE revoked_ms IS NULL AND receipt_stopped_ms IS NULL AND coalesce(last_used_ms, first_seen_ms) >= ?
                      AND coalesce(receipt_not_before_ms, 0) <= ? AND coalesce(receipt_retry_ms, 0) <= ?
                      AND (lease_until_ms IS NULL OR lease_until_ms <= ?)
                    ORDER BY coalesce(receipt_not_before_ms, 0), key_id LIMIT ?)
                RETURNING *
                """, [.text(owner), .integer(Self.ms(until)), .integer(Self.ms(activeSince)), .integer(Self.ms(now)), .integer(Self.ms(now)),
                      .integer(Self.ms(now)), .integer(Int64(limit))])
        }.records(AppAttestKeyRecord.init(row:))
    }

    public func storeRenewedReceipt(keyID: String, owner: String, receipt: Data, riskMetric: Int?, notBefore: Date?, expiration: Date,
                                    now: Date) async throws(StorageError) -> Bool {
        try await storeReceipt(keyID: keyID, leaseOwner: owner, receipt: receipt, riskMetric: riskMetric, notBefore: notBefore, expiration: expiration, now: now)
    }

    public func storeAttestationReceipt(keyID: String, receipt: Data, riskMetric: Int?, notBefore: Date?, expiration: Date,
                                        now: Date) async throws(StorageError) -> Bool {
        try await storeReceipt(keyID: keyID, leaseOwner: nil, receipt: receipt, riskMetric: riskMetric, notBefore: notBefore, expiration: expiration, now: now)
    }

    public func countAppAttestKeysWithUnknownMetric(attestedBefore: Date, activeSince: Date) async throws(StorageError) -> Int {
        let rows = try await run { (db) throws(SQLiteError) in
            try db.query(Self.unknownMetricCount, [.integer(Self.ms(attestedBefore)), .integer(Self.ms(activeSince))])
        }
        return Int(try rows.first?.integer("n") ?? 0)
    }

    /// Counts only the keys without a metric (`app_attest_keys_unknown_metric`, schema version 9), not every key.
    static let unknownMetricCount = """
        SELECT count(*) AS n FROM app_attest_keys
        WHERE risk_metric IS NULL AND revoked_ms IS NULL AND first_seen_ms < ? AND coalesce(last_used_ms, first_seen_ms) >= ?
        """

    /// `leaseOwner` nil: only while no lease is held (SQLite's `IS` compares NULL as a value).
    private func storeReceipt(keyID: String, leaseOwner: String?, receipt: Data, riskMetric: Int?, notBefore: Date?, expiration: Date,
                              now: Date) async throws(StorageError) -> Bool {
        try await run { (db) throws(SQLiteError) -> Bool in
            try db.transaction { tx throws(SQLiteError) -> Bool in
                try tx.query("""
                    UPDATE app_attest_keys SET receipt = ?, receipt_not_before_ms = ?, receipt_expires_ms = ?,
                        risk_metric = coalesce(?, risk_metric), risk_metric_ms = CASE WHEN ? IS NULL THEN risk_metric_ms ELSE ? END,
                        receipt_retry_ms = NULL, lease_owner = NULL, lease_until_ms = NULL
                    WHERE key_id = ? AND lease_owner IS ?
                    """, [.blob(receipt), notBefore.map { .integer(Self.ms($0)) } ?? .null, .integer(Self.ms(expiration)),
                          riskMetric.map { .integer(Int64($0)) } ?? .null, riskMetric.map { .integer(Int64($0)) } ?? .null, .integer(Self.ms(now)),
                          .text(keyID), leaseOwner.map { .text($0) } ?? .null])
                guard tx.changes == 1 else { return false }
                if let riskMetric {
                    try tx.query("INSERT INTO app_attest_risk_history (key_id, at_ms, metric) VALUES (?, ?, ?) ON CONFLICT(key_id, at_ms) DO UPDATE SET metric = excluded.metric",
                                 [.text(keyID), .integer(Self.ms(now)), .integer(Int64(riskMetric))])
                    try tx.query("""
                        DELETE FROM app_attest_risk_history WHERE key_id = ? AND at_ms NOT IN (
                            SELECT at_ms FROM app_attest_risk_history WHERE key_id = ? ORDER BY at_ms DESC LIMIT ?)
                        """, [.text(keyID), .text(keyID), .integer(Int64(AppAttestReceiptState.historyLimit))])
                }
                return true
            }
        }
    }

    public func postponeReceiptRefresh(keyID: String, owner: String, retryAt: Date) async throws(StorageError) {
        try await run { (db) throws(SQLiteError) in
            _ = try db.change("UPDATE app_attest_keys SET receipt_retry_ms = ?, lease_owner = NULL, lease_until_ms = NULL WHERE key_id = ? AND lease_owner = ?",
                              [.integer(Self.ms(retryAt)), .text(keyID), .text(owner)])
        }
    }

    public func stopReceiptRefresh(keyID: String, owner: String, now: Date) async throws(StorageError) {
        try await run { (db) throws(SQLiteError) in
            _ = try db.change("""
                UPDATE app_attest_keys SET receipt_stopped_ms = coalesce(receipt_stopped_ms, ?), lease_owner = NULL, lease_until_ms = NULL
                WHERE key_id = ? AND lease_owner = ?
                """, [.integer(Self.ms(now)), .text(keyID), .text(owner)])
        }
    }

    public func appAttestReceiptState(keyID: String) async throws(StorageError) -> AppAttestReceiptState? {
        let (keys, history) = try await run { (db) throws(SQLiteError) in
            (try db.query("SELECT * FROM app_attest_keys WHERE key_id = ?", [.text(keyID)]),
             try db.query("SELECT * FROM app_attest_risk_history WHERE key_id = ? ORDER BY at_ms DESC", [.text(keyID)]))
        }
        guard let row = keys.first else { return nil }
        return try AppAttestReceiptState(row: row, history: history.records(RiskMetricSample.init(row:)))
    }

    public func appAttestKeys(minRiskMetric: Int, after: String?, limit: Int) async throws(StorageError) -> [AppAttestKeyRecord] {
        try await run { (db) throws(SQLiteError) in
            try db.query("SELECT * FROM app_attest_keys WHERE risk_metric >= ? AND key_id > ? ORDER BY key_id LIMIT ?",
                         [.integer(Int64(minRiskMetric)), .text(after ?? ""), .integer(Int64(limit))])
        }.records(AppAttestKeyRecord.init(row:))
    }

    public func appAttestKeyReceipts(minRiskMetric: Int, after: String?, limit: Int) async throws(StorageError)
        -> [(key: AppAttestKeyRecord, receipt: AppAttestReceiptState)] {
        let page: [SQLiteValue] = [.integer(Int64(minRiskMetric)), .text(after ?? ""), .integer(Int64(limit))]
        let (keys, history) = try await run { (db) throws(SQLiteError) in
            (try db.query("SELECT * FROM app_attest_keys WHERE risk_metric >= ? AND key_id > ? ORDER BY key_id LIMIT ?", page),
             try db.query("""
                 SELECT * FROM app_attest_risk_history WHERE key_id IN
                     (SELECT key_id FROM app_attest_keys WHERE risk_metric >= ? AND key_id > ? ORDER BY key_id LIMIT ?)
                 ORDER BY key_id, at_ms DESC
                 """, page))
        }
        return try AppAttestReceiptState.keyReceipts(keys: keys, history: history)
    }
}
