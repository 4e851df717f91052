import AppleDeviceCheckClient
import DeviceCheckModel
import Locking

/// Feeds the Apple client's per-attempt events into the registry and the console's overview, and logs a
/// failed TLS handshake the first time each host fails for each reason (every attempt is counted).
struct AppleCallMetrics: AppleCallObserver {
    let registry: MetricsRegistry
    let statistics: StatisticsRecorder
    let logger: LogWriter
    /// The (host, reason) pairs already logged. Bounded: curl's reasons are a few fixed texts per host.
    private let loggedTLSFailures = Lock<Set<String>>([])

    init(registry: MetricsRegistry, statistics: StatisticsRecorder, logger: LogWriter) {
        self.registry = registry
        self.statistics = statistics
        self.logger = logger
    }

    func appleCall(endpoint: AppleCallEndpoint, outcome: String, seconds: Double) {
        registry.increment(.appleCalls, endpoint.label, outcome)
        // An overloaded call never left: its time is a wait, not Apple's latency.
        let sent = outcome != TransientFailure.overloaded.label
        if sent { registry.observe(.appleCallSeconds, endpoint.label, value: seconds) }
        statistics.appleCall(endpoint: endpoint.label, outcome: outcome, seconds: sent ? seconds : nil)
    }

    func appleConnectionsOpened(host: String, count: Int) {
        registry.increment(.appleConnectionsOpened, host, by: Double(count))
    }

    func appleTLSFailed(endpoint: AppleCallEndpoint, host: String, reason: String) {
        let first = loggedTLSFailures.withLock { logged -> Bool in
            guard logged.count < 256 else { return false }
            return logged.insert(host + "\n" + reason).inserted
        }
        guard first else { return }
        logger.log(.warning, "Apple TLS failed", ["host": .string(host), "reason": .string(reason), "endpoint": .string(endpoint.label)])
    }
}
