/// Why an app used the DeviceCheck tier instead of App Attest (`app_attest_status` on the fallback exchange),
/// so a team sees its strong-tier adoption and a sudden rise of "unsupported" (a device farm's claim).
public enum AppAttestFallbackReason: String, Sendable, CaseIterable {
    /// `DCAppAttestService.isSupported` is false (an old device, a simulator, or a lie).
    case unsupported
    /// The rollout has not asked this install to attest yet.
    case notEnrolled = "not_enrolled"
    /// TwoBits or Apple asked the app to slow down.
    case throttled
    /// Key generation or attestation failed on the device or at TwoBits.
    case attestFailed = "attest_failed"
    /// An assertion failed on the device or at TwoBits.
    case assertFailed = "assert_failed"
    /// The App Attest calls could not reach Apple or TwoBits.
    case network
}
