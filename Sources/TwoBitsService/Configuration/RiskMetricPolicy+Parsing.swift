import FoundationEssentials
import UseCases

extension RiskMetricPolicy {
    /// `app_attest.risk`: `{"max_metric": N, "action": "refuse" | "flag", "unknown_metric_grace_seconds": S,
    /// "check_at_attestation": B}` (docs/configuration.md); nil when absent.
    static func parse(_ section: inout ConfigReader) throws(ConfigurationError) -> RiskMetricPolicy? {
        guard var risk = try section.object("risk") else { return nil }
        // 1 at least: every attested key counts itself.
        guard let maxMetric = try risk.optionalInt("max_metric", range: 1...1_000_000) else {
            throw ConfigurationError(risk.field("max_metric"), "is required: the highest risk metric accepted (1 or more)")
        }
        let name = try risk.string("action")
        guard let action = Action(rawValue: name) else { throw ConfigurationError(risk.field("action"), "must be refuse or flag") }
        // An hour at least: a new key's first renewal waits its turn behind the refresher's rate; 30 days at most,
        // after which Apple keeps no data for the key anyway.
        let grace = try risk.optionalInt("unknown_metric_grace_seconds", range: 3_600...2_592_000).map(TimeInterval.init)
        // Default: on with refuse (a device over the limit gets no new key), off with flag (no Apple call to wait for).
        let checkAtAttestation = try risk.bool("check_at_attestation", default: action == .refuse)
        try risk.rejectUnknownFields()
        return RiskMetricPolicy(maxMetric: maxMetric, action: action, unknownGrace: grace ?? RiskMetricPolicy.defaultUnknownGrace,
                                checkAtAttestation: checkAtAttestation)
    }
}
