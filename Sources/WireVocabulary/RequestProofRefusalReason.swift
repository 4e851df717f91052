/// The `reason` of a request proof's `valid: false` (`POST /v1/app-attest/request-proofs/verify`): why the main
/// API must not serve the request the proof came with. The bound fields' own three, the assertion's steps and
/// TwoBits' refusals shared with assertions (spelled once, in their own types), and the device's bans. A struct
/// like `AppAttestRefusalReason`, so a client reads reasons of a newer server too.
public struct RequestProofRefusalReason: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The reason as sent (snake_case).
    public let rawValue: String

    /// Any reason, also one this version does not name.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// A refusal an assertion has too (`challenge_unknown_or_used`, `bad_signature`, ...).
    public init(_ refusal: AppAttestRefusalReason) { rawValue = refusal.rawValue }

    public var description: String { rawValue }

    /// The body the app signed is not the body the main API received (their SHA-256 differ).
    public static let payloadMismatch = RequestProofRefusalReason(rawValue: "payload_mismatch")
    /// The app signed another HTTP method than the one the main API received.
    public static let methodMismatch = RequestProofRefusalReason(rawValue: "method_mismatch")
    /// The app signed another path (or query) than the one the main API received.
    public static let pathMismatch = RequestProofRefusalReason(rawValue: "path_mismatch")
    /// The client data is not a request proof's: a JSON object of exactly `challenge`, `method`, `path`, `body_sha256`.
    public static let clientDataMismatch = RequestProofRefusalReason(.clientDataMismatch)
    /// Never issued for a request proof, expired, or used (a challenge of another purpose is never a proof's).
    public static let challengeUnknownOrUsed = RequestProofRefusalReason(.challengeUnknownOrUsed)
    public static let keyUnknown = RequestProofRefusalReason(.keyUnknown)
    public static let keyRevoked = RequestProofRefusalReason(.keyRevoked)
    public static let badFormat = RequestProofRefusalReason(AppAttestRefusalReason(.badFormat))
    public static let badSignature = RequestProofRefusalReason(AppAttestRefusalReason(.badSignature))
    public static let rpIDMismatch = RequestProofRefusalReason(AppAttestRefusalReason(.rpIDMismatch))
    public static let counterNotIncreasing = RequestProofRefusalReason(.counterNotIncreasing)
    public static let riskMetricExceeded = RequestProofRefusalReason(.riskMetricExceeded)
    public static let riskMetricUnknown = RequestProofRefusalReason(.riskMetricUnknown)
    /// The device token that came with the proof reads banned.
    public static let deviceBanned = RequestProofRefusalReason(rawValue: APIErrorCode.deviceBanned.rawValue)
    /// Apple refused the device token that came with the proof.
    public static let invalidDeviceToken = RequestProofRefusalReason(rawValue: APIErrorCode.invalidDeviceToken.rawValue)
    /// `app_attest.require_device_token` is set and no device token came with the proof.
    public static let deviceTokenRequired = RequestProofRefusalReason(rawValue: APIErrorCode.deviceTokenRequired.rawValue)

    /// Every reason TwoBits sends, in the order the checks run.
    public static let all: [RequestProofRefusalReason] = [
        .clientDataMismatch, .keyUnknown, .keyRevoked, .badFormat, .badSignature, .rpIDMismatch, .counterNotIncreasing,
        .methodMismatch, .pathMismatch, .payloadMismatch, .riskMetricExceeded, .riskMetricUnknown, .deviceTokenRequired,
        .invalidDeviceToken, .deviceBanned, .challengeUnknownOrUsed,
    ]
}
