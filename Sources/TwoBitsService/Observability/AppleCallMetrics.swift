import DeviceCheck

/// Feeds the Apple client's per-attempt events into the registry.
struct AppleCallMetrics: AppleCallObserver {
    let registry: MetricsRegistry

    func appleCall(endpoint: AppleEndpoint, outcome: String, seconds: Double) {
        registry.increment("twobits_apple_calls_total", "HTTP attempts against Apple by endpoint and outcome",
                           labels: [("endpoint", endpoint.rawValue), ("outcome", outcome)])
        if outcome != TransientFailure.overloaded.label {
            registry.observe("twobits_apple_call_seconds", "Latency of HTTP attempts against Apple",
                             labels: [("endpoint", endpoint.rawValue)], seconds)
        }
    }
}
