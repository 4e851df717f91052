import AppleDeviceCheckClient
import DeviceCheckModel

/// Feeds the Apple client's per-attempt events into the registry and the console's overview.
struct AppleCallMetrics: AppleCallObserver {
    let registry: MetricsRegistry
    let statistics: StatisticsRecorder

    func appleCall(endpoint: AppleCallEndpoint, outcome: String, seconds: Double) {
        registry.increment(.appleCalls, endpoint.label, outcome)
        // An overloaded call never left: its time is a wait, not Apple's latency.
        let sent = outcome != TransientFailure.overloaded.label
        if sent { registry.observe(.appleCallSeconds, endpoint.label, value: seconds) }
        statistics.appleCall(endpoint: endpoint.label, outcome: outcome, seconds: sent ? seconds : nil)
    }
}
