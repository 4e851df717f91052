public import DeviceCheckModel

/// Receives one event per HTTP attempt against Apple, for metrics. Must be cheap and non-blocking.
public protocol AppleCallObserver: Sendable {
    /// - Parameters:
    ///   - outcome: "ok", "not_found", "invalid_device_token", "rejected", or a `TransientFailure.label`.
    func appleCall(endpoint: AppleEndpoint, outcome: String, seconds: Double)
}
