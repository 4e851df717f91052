/// Why a token came from the DeviceCheck tier rather than App Attest (sent as `app_attest_status` when the
/// relay is told to).
public enum AppAttestStatus: String, Sendable, Equatable, Codable, CaseIterable {
    /// The device cannot use App Attest (`isSupported` false, or `featureUnsupported`).
    case unsupported
    /// The server does not offer App Attest to this app yet: TwoBits answered 409 `not_enabled`, or its
    /// challenge answered `enroll: false` (the install is outside `app_attest.rollout`, or at the attestation cap).
    case notEnrolled = "not_enrolled"
    /// Apple answered `serverUnavailable`; the client is backing off.
    case throttled
    /// Generating or attesting the key failed, or TwoBits refused the attestation.
    case attestFailed = "attest_failed"
    /// Generating or verifying the assertion failed.
    case assertFailed = "assert_failed"
    /// The relay could not reach TwoBits for the App Attest calls.
    case network
}
