import AppleDeviceCheckClient
import DeviceCheckModel

/// Feeds the Apple client's per-attempt events into the registry and the console's overview.
struct AppleCallMetrics: AppleCallObserver {
    let registry: MetricsRegistry
    let statistics: StatisticsRecorder

    func appleCall(endpoint: AppleEndpoint, outcome: String, seconds: Double) {
        registry.increment(.appleCalls, endpoint.rawValue, outcome)
        // An overloaded call never left: its time is a wait, not Apple's latency.
        let sent = outcome != TransientFailure.overloaded.label
        if sent { registry.observe(.appleCallSeconds, endpoint.rawValue, value: seconds) }
        statistics.appleCall(endpoint: endpoint.rawValue, outcome: outcome, seconds: sent ? seconds : nil)
    }
}
