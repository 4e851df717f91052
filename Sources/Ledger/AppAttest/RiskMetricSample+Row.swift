import FoundationEssentials

extension RiskMetricSample {
    /// An `app_attest_risk_history` row.
    public init(row r: some LedgerRow) throws(StorageError) {
        self.init(metric: Int(try r.integer("metric") ?? 0), at: try r.time("at_ms") ?? Date(timeIntervalSince1970: 0))
    }
}
