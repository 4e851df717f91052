public import FoundationEssentials

/// One risk metric Apple sent for a key, and when it was stored.
public struct RiskMetricSample: Sendable, Equatable {
    public var metric: Int
    public var at: Date

    public init(metric: Int, at: Date) {
        self.metric = metric
        self.at = at
    }
}
