/// The `reason` beside `attestation_invalid` / `assertion_invalid`: one of Apple's steps
/// (`AppAttestFailureReason`), or what TwoBits itself refused (the challenge, the key, the counter, the
/// rollout's rules). A struct like `APIErrorCode`, so a client reads reasons of a newer server too.
public struct AppAttestRefusalReason: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The reason as sent (snake_case).
    public let rawValue: String

    /// Any reason, also one this version does not name.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// The reason of a failed verification step.
    public init(_ failure: AppAttestFailureReason) { rawValue = failure.rawValue }

    public var description: String { rawValue }

    public static let challengeUnknownOrUsed = AppAttestRefusalReason(rawValue: "challenge_unknown_or_used")
    public static let clientDataMismatch = AppAttestRefusalReason(rawValue: "client_data_mismatch")
    public static let keyUnknown = AppAttestRefusalReason(rawValue: "key_unknown")
    public static let keyRevoked = AppAttestRefusalReason(rawValue: "key_revoked")
    /// Also a verification step's reason: the assertion's counter is not above the stored one.
    public static let counterNotIncreasing = AppAttestRefusalReason(.counterNotIncreasing)
    public static let validationCategoryRefused = AppAttestRefusalReason(rawValue: "validation_category_refused")
    public static let riskMetricExceeded = AppAttestRefusalReason(rawValue: "risk_metric_exceeded")
    public static let riskMetricUnknown = AppAttestRefusalReason(rawValue: "risk_metric_unknown")

    /// Every reason TwoBits sends: Apple's steps', then its own.
    public static let all: [AppAttestRefusalReason] = AppAttestFailureReason.allCases.map(AppAttestRefusalReason.init) + [
        .challengeUnknownOrUsed, .clientDataMismatch, .keyUnknown, .keyRevoked, .validationCategoryRefused, .riskMetricExceeded,
        .riskMetricUnknown,
    ]
}
