import FoundationEssentials

extension AppAttestReceiptState {
    /// An `app_attest_keys` row (`SELECT *`) and the key's `app_attest_risk_history` rows, newest first.
    public init(row r: some LedgerRow, history: [RiskMetricSample]) throws(StorageError) {
        let firstSeen = try r.time("first_seen_ms") ?? Date(timeIntervalSince1970: 0)
        self.init(riskMetric: try r.integer("risk_metric").map(Int.init), riskMetricAt: try r.time("risk_metric_ms"), history: history,
                  notBefore: try r.time("receipt_not_before_ms"), expiresAt: try r.time("receipt_expires_ms"),
                  stoppedAt: try r.time("receipt_stopped_ms"),
                  lastUsed: try r.time("last_used_ms") ?? firstSeen)
    }
}

extension AppAttestReceiptState {
    /// Each `app_attest_keys` row's key and receipt state, with its `app_attest_risk_history` rows among `history`
    /// (grouped by `key_id`, newest first within a key), in the order of `keys`.
    public static func keyReceipts<Row: LedgerRow>(keys: [Row], history: [Row]) throws(StorageError)
        -> [(key: AppAttestKeyRecord, receipt: AppAttestReceiptState)] {
        var samples: [String: [RiskMetricSample]] = [:]
        for row in history { samples[try row.text("key_id") ?? "", default: []].append(try RiskMetricSample(row: row)) }
        var pairs: [(key: AppAttestKeyRecord, receipt: AppAttestReceiptState)] = []
        for row in keys {
            let key = try AppAttestKeyRecord(row: row)
            pairs.append((key, try AppAttestReceiptState(row: row, history: samples[key.keyID] ?? [])))
        }
        return pairs
    }
}
