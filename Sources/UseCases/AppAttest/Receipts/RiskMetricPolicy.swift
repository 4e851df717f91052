/// `app_attest.risk`: what an assertion by a key whose risk metric is over `maxMetric` gets.
public struct RiskMetricPolicy: Sendable, Equatable {
    public enum Action: String, Sendable {
        /// 403 `assertion_invalid`, reason `risk_metric_exceeded`.
        case refuse
        /// The token is issued; its `risk` claim tells the team's API.
        case flag
    }

    public var maxMetric: Int
    public var action: Action

    public init(maxMetric: Int, action: Action) {
        self.maxMetric = maxMetric
        self.action = action
    }

    /// Whether a key with this metric is refused; an unknown metric never is.
    public func refuses(_ metric: Int?) -> Bool {
        guard let metric, metric > maxMetric else { return false }
        return action == .refuse
    }
}
