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
