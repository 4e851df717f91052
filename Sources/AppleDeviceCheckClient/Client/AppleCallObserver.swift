/// Receives one event per HTTP attempt against Apple, for metrics. Must be cheap and non-blocking.
public protocol AppleCallObserver: Sendable {
    /// - Parameters:
    ///   - outcome: "ok", "not_found", "invalid_device_token", "rejected", or a `TransientFailure.label`; for
    ///     `attestationData` also "not_modified", "no_data" and "incorrect_environment" (Apple's 304, 404 and 400
    ///     Incorrect Environment).
    func appleCall(endpoint: AppleCallEndpoint, outcome: String, seconds: Double)

    /// An attempt's TLS handshake with `host` failed (its outcome is "tls_failed"); `reason` is curl's text.
    func appleTLSFailed(endpoint: AppleCallEndpoint, host: String, reason: String)

    /// An attempt opened `count` new connections to `host` (each a TCP connect, and a TLS handshake over https).
    func appleConnectionsOpened(host: String, count: Int)
}

extension AppleCallObserver {
    public func appleTLSFailed(endpoint: AppleCallEndpoint, host: String, reason: String) {}
    public func appleConnectionsOpened(host: String, count: Int) {}
}
