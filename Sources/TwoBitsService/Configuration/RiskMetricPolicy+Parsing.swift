import UseCases

extension RiskMetricPolicy {
    /// `app_attest.risk`: `{"max_metric": N, "action": "refuse" | "flag"}` (docs/configuration.md); nil when absent.
    static func parse(_ section: inout ConfigReader) throws(ConfigurationError) -> RiskMetricPolicy? {
        guard var risk = try section.object("risk") else { return nil }
        // 1 at least: every attested key counts itself.
        guard let maxMetric = try risk.optionalInt("max_metric", range: 1...1_000_000) else {
            throw ConfigurationError(risk.field("max_metric"), "is required: the highest risk metric accepted (1 or more)")
        }
        let name = try risk.string("action")
        guard let action = Action(rawValue: name) else { throw ConfigurationError(risk.field("action"), "must be refuse or flag") }
        try risk.rejectUnknownFields()
        return RiskMetricPolicy(maxMetric: maxMetric, action: action)
    }
}
