/// Why an app used the DeviceCheck tier instead of App Attest: `app_attest_status` on the fallback exchange,
/// which the client sets and TwoBits counts (a team sees its strong-tier adoption, and a sudden rise of
/// "unsupported": a device farm's claim). The client library names it `AppAttestStatus`.
public enum AppAttestFallbackReason: String, Sendable, Equatable, Codable, CaseIterable {
    /// The device cannot use App Attest: `DCAppAttestService.isSupported` is false (an old device, a simulator,
    /// or a lie), or Apple answered `featureUnsupported`.
    case unsupported
    /// The server does not offer App Attest to this install yet: TwoBits answered 409 `not_enabled`, or its
    /// challenge answered `enroll: false` (the install is outside `app_attest.rollout`, or at the attestation cap).
    case notEnrolled = "not_enrolled"
    /// TwoBits or Apple asked the app to slow down (Apple's `serverUnavailable`; the client is backing off).
    case throttled
    /// Generating or attesting the key failed on the device, or TwoBits refused the attestation.
    case attestFailed = "attest_failed"
    /// Generating or verifying the assertion failed, on the device or at TwoBits.
    case assertFailed = "assert_failed"
    /// The App Attest calls could not reach Apple or TwoBits.
    case network
}
