import DeviceCheck

/// Feeds the Apple client's per-attempt events into the registry.
struct AppleCallMetrics: AppleCallObserver {
    let registry: MetricsRegistry

    func appleCall(endpoint: AppleEndpoint, outcome: String, seconds: Double) {
        registry.increment(.appleCalls, endpoint.rawValue, outcome)
        if outcome != TransientFailure.overloaded.label {
            registry.observe(.appleCallSeconds, endpoint.rawValue, value: seconds)
        }
    }
}
