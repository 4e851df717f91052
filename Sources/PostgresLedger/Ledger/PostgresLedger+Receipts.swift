public import FoundationEssentials
public import Ledger

extension PostgresLedger {
    /// The inner SELECT locks the rows it picks and skips rows another replica is leasing at this moment; its
    /// WHERE is re-checked on the newest version of a row a concurrent lease committed (READ COMMITTED's
    /// re-check of a row locked FOR UPDATE), so two replicas never lease one key.
    public func leaseDueReceipts(owner: String, until: Date, activeSince: Date, now: Date, limit: Int) async throws(StorageError) -> [AppAttestKeyRecord] {
        try await run { db throws(PostgresError) in
            try db.query("""
                UPDATE app_attest_keys SET lease_owner = $1, lease_until_ms = $2 WHERE key_id IN (
                    SELECT key_id FROM app_attest_keys
                    WHERE revoked_ms IS NULL AND receipt_stopped_ms IS NULL AND coalesce(last_used_ms, first_seen_ms) >= $3
                      AND coalesce(receipt_not_before_ms, 0) <= $4 AND coalesce(receipt_retry_ms, 0) <= $4
                      AND (lease_until_ms IS NULL OR lease_until_ms <= $4)
                    ORDER BY coalesce(receipt_not_before_ms, 0), key_id LIMIT $5 FOR UPDATE SKIP LOCKED)
                RETURNING *
                """, [.text(owner), .ms(until), .ms(activeSince), .ms(now), .int(limit)])
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
        let rows = try await run { db throws(PostgresError) in
            try db.query("""
                SELECT count(*) AS n FROM app_attest_keys
                WHERE risk_metric IS NULL AND revoked_ms IS NULL AND first_seen_ms < $1 AND coalesce(last_used_ms, first_seen_ms) >= $2
                """, [.ms(attestedBefore), .ms(activeSince)])
        }
        return Int(try rows.first?.integer("n") ?? 0)
    }

    /// `leaseOwner` nil: only while no lease is held.
    private func storeReceipt(keyID: String, leaseOwner: String?, receipt: Data, riskMetric: Int?, notBefore: Date?, expiration: Date,
                              now: Date) async throws(StorageError) -> Bool {
        try await run { db throws(PostgresError) -> Bool in
            try db.transaction { tx throws(PostgresError) -> Bool in
                let updated = try tx.query("""
                    UPDATE app_attest_keys SET receipt = $1, receipt_not_before_ms = $2, receipt_expires_ms = $3,
                        risk_metric = coalesce($4, risk_metric), risk_metric_ms = CASE WHEN $4::BIGINT IS NULL THEN risk_metric_ms ELSE $5 END,
                        receipt_retry_ms = NULL, lease_owner = NULL, lease_until_ms = NULL
                    WHERE key_id = $6 AND lease_owner IS NOT DISTINCT FROM $7::TEXT RETURNING 1 AS stored
                    """, [.bytea(receipt), notBefore.map { .ms($0) } ?? .null, .ms(expiration), riskMetric.map { .int($0) } ?? .null, .ms(now),
                          .text(keyID), leaseOwner.map { .text($0) } ?? .null])
                guard !updated.isEmpty else { return false }
                if let riskMetric {
                    try tx.query("""
                        INSERT INTO app_attest_risk_history (key_id, at_ms, metric) VALUES ($1, $2, $3)
                        ON CONFLICT (key_id, at_ms) DO UPDATE SET metric = excluded.metric
                        """, [.text(keyID), .ms(now), .int(riskMetric)])
                    try tx.query("""
                        DELETE FROM app_attest_risk_history WHERE key_id = $1 AND at_ms NOT IN (
                            SELECT at_ms FROM app_attest_risk_history WHERE key_id = $1 ORDER BY at_ms DESC LIMIT $2)
                        """, [.text(keyID), .int(AppAttestReceiptState.historyLimit)])
                }
                return true
            }
        }
    }

    public func postponeReceiptRefresh(keyID: String, owner: String, retryAt: Date) async throws(StorageError) {
        try await run { db throws(PostgresError) in
            try db.query("UPDATE app_attest_keys SET receipt_retry_ms = $1, lease_owner = NULL, lease_until_ms = NULL WHERE key_id = $2 AND lease_owner = $3",
                         [.ms(retryAt), .text(keyID), .text(owner)])
        }
    }

    public func stopReceiptRefresh(keyID: String, owner: String, now: Date) async throws(StorageError) {
        try await run { db throws(PostgresError) in
            try db.query("""
                UPDATE app_attest_keys SET receipt_stopped_ms = coalesce(receipt_stopped_ms, $1), lease_owner = NULL, lease_until_ms = NULL
                WHERE key_id = $2 AND lease_owner = $3
                """, [.ms(now), .text(keyID), .text(owner)])
        }
    }

    public func appAttestReceiptState(keyID: String) async throws(StorageError) -> AppAttestReceiptState? {
        let (keys, history) = try await run { db throws(PostgresError) in
            (try db.query("SELECT * FROM app_attest_keys WHERE key_id = $1", [.text(keyID)]),
             try db.query("SELECT * FROM app_attest_risk_history WHERE key_id = $1 ORDER BY at_ms DESC", [.text(keyID)]))
        }
        guard let row = keys.first else { return nil }
        return try AppAttestReceiptState(row: row, history: history.records(RiskMetricSample.init(row:)))
    }

    public func appAttestKeys(minRiskMetric: Int, after: String?, limit: Int) async throws(StorageError) -> [AppAttestKeyRecord] {
        try await run { db throws(PostgresError) in
            try db.query("SELECT * FROM app_attest_keys WHERE risk_metric >= $1 AND key_id > $2 ORDER BY key_id LIMIT $3",
                         [.int(minRiskMetric), .text(after ?? ""), .int(limit)])
        }.records(AppAttestKeyRecord.init(row:))
    }

    public func appAttestKeyReceipts(minRiskMetric: Int, after: String?, limit: Int) async throws(StorageError)
        -> [(key: AppAttestKeyRecord, receipt: AppAttestReceiptState)] {
        let page: [PostgresValue] = [.int(minRiskMetric), .text(after ?? ""), .int(limit)]
        let (keys, history) = try await run { db throws(PostgresError) in
            (try db.query("SELECT * FROM app_attest_keys WHERE risk_metric >= $1 AND key_id > $2 ORDER BY key_id LIMIT $3", page),
             try db.query("""
                 SELECT * FROM app_attest_risk_history WHERE key_id IN
                     (SELECT key_id FROM app_attest_keys WHERE risk_metric >= $1 AND key_id > $2 ORDER BY key_id LIMIT $3)
                 ORDER BY key_id, at_ms DESC
                 """, page))
        }
        return try AppAttestReceiptState.keyReceipts(keys: keys, history: history)
    }
}
