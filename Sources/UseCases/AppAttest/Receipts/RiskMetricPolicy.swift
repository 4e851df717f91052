public import FoundationEssentials

/// `app_attest.risk`: what a key whose risk metric is too high, or unknown for too long, gets.
public struct RiskMetricPolicy: Sendable, Equatable {
    public enum Action: String, Sendable {
        /// 403 `assertion_invalid` (or `attestation_invalid`), reason `risk_metric_exceeded` or `risk_metric_unknown`.
        case refuse
        /// The token is issued; its `risk` claim tells the team's API.
        case flag
    }

    /// What the policy makes of one key's metric.
    public enum Verdict: Sendable, Equatable {
        case allowed
        /// Over `maxMetric`.
        case exceeded(metric: Int)
        /// No metric `unknownGrace` after the key was attested: its receipts could not be refreshed.
        case unknownTooLong(attestedAt: Date)
    }

    /// The default of `unknown_metric_grace_seconds`: two days, so that a key renewable at once after attestation
    /// has had two of the refresher's daily retries after a refusal, and any Apple outage short of two days passes.
    public static let defaultUnknownGrace: TimeInterval = 2 * 86_400

    public var maxMetric: Int
    public var action: Action
    /// How long after attestation a key may go without a metric before `refuse` treats it as suspicious: a key
    /// whose receipts cannot be refreshed is not clean.
    public var unknownGrace: TimeInterval
    /// Whether an attestation renews its ATTEST receipt at Apple at once, so the device's metric (its other keys
    /// counted) applies to the new key before it gets a token: a farm attesting a fresh key per session meets the policy.
    public var checkAtAttestation: Bool

    public init(maxMetric: Int, action: Action, unknownGrace: TimeInterval = RiskMetricPolicy.defaultUnknownGrace, checkAtAttestation: Bool? = nil) {
        self.maxMetric = maxMetric
        self.action = action
        self.unknownGrace = unknownGrace
        self.checkAtAttestation = checkAtAttestation ?? (action == .refuse)
    }

    /// The verdict on a key with this metric, attested at `attestedAt`, at `now`. Pure.
    public func verdict(metric: Int?, attestedAt: Date, now: Date) -> Verdict {
        guard action == .refuse else { return .allowed }
        guard let metric else {
            return now.timeIntervalSince(attestedAt) > unknownGrace ? .unknownTooLong(attestedAt: attestedAt) : .allowed
        }
        return metric > maxMetric ? .exceeded(metric: metric) : .allowed
    }
}
