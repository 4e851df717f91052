public import Policy

/// Why the strong tier issued no token.
public enum AppAttestExchangeError: Error, Sendable {
    /// App Attest verification or its storage refused the request.
    case appAttest(AppAttestError)
    /// `app_attest.require_device_token` is set and the request carried none.
    case deviceTokenRequired
    /// The device's bits refused it (banned), or Apple refused its DeviceCheck token or was unavailable.
    case refused(PolicyError)
}
