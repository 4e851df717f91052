/// How a platform service (App Attest, DeviceCheck) failed, in the terms of Apple's `DCError` codes: the
/// flow decides on these (discard the key, back off, fall back), whatever produced them.
public enum PlatformFailure: Error, Sendable, Equatable {
    /// `DCError.featureUnsupported`: this device, OS or build cannot use the service.
    case featureUnsupported
    /// `DCError.invalidInput`: the arguments were refused (a malformed key id or hash).
    case invalidInput
    /// `DCError.invalidKey`: the key is gone or unusable, as after a restore onto another device.
    case invalidKey
    /// `DCError.serverUnavailable`: Apple's service is unreachable or throttling this device.
    case serverUnavailable
    /// `DCError.unknownSystemFailure` or any other error, described.
    case unknown(String)
}
