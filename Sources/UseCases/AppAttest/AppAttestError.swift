public import AppAttest
public import FoundationEssentials
public import Ledger
public import WireVocabulary

/// Why the strong tier refused a request. Each maps to one HTTP answer with its own code.
public enum AppAttestError: Error, Sendable, Equatable {
    /// Verification failed at one of Apple's steps (`bad_chain`, `nonce_mismatch`, `rp_id_mismatch`, …).
    case invalid(AppAttestFailure.Reason, detail: String)
    /// The challenge was never issued, has expired or was used already.
    case challengeUnknownOrUsed
    /// The assertion's client data is not a JSON object whose `challenge` is the request's challenge.
    case clientDataMismatch
    /// No attestation of this key was accepted.
    case keyUnknown
    /// The key was attested before; an attestation is accepted once per key.
    case keyAlreadyAttested
    /// An admin revoked the key.
    case keyRevoked
    /// The assertion's counter is not above the stored one: a replay, or concurrent assertions out of order.
    case counterNotIncreasing(stored: UInt32)
    /// The device's validation category (App Store, TestFlight, development, …) is not accepted here.
    case validationCategoryRefused(Int?)
    /// The key's risk metric (Apple's count of keys its device attested for the app in 30 days) is over
    /// `app_attest.risk.max_metric` and the action is `refuse`.
    case riskMetricExceeded(metric: Int, max: Int)
    /// The key has had no risk metric for longer than `app_attest.risk.unknown_metric_grace_seconds` since it was
    /// attested (its receipts could not be refreshed) and the action is `refuse`.
    case riskMetricUnknown(attestedAt: Date, grace: TimeInterval)
    case storage(StorageError)

    public static func == (a: AppAttestError, b: AppAttestError) -> Bool { a.code == b.code }

    /// The stable snake_case reason clients and logs see (the error code itself for the two refusals that are
    /// not `attestation_invalid` / `assertion_invalid`), in the wire's vocabulary.
    public var code: String {
        switch self {
        case .invalid(let reason, _): return reason.rawValue
        case .challengeUnknownOrUsed: return AppAttestRefusalReason.challengeUnknownOrUsed.rawValue
        case .clientDataMismatch: return AppAttestRefusalReason.clientDataMismatch.rawValue
        case .keyUnknown: return AppAttestRefusalReason.keyUnknown.rawValue
        case .keyAlreadyAttested: return APIErrorCode.keyAlreadyAttested.rawValue
        case .keyRevoked: return AppAttestRefusalReason.keyRevoked.rawValue
        case .counterNotIncreasing: return AppAttestRefusalReason.counterNotIncreasing.rawValue
        case .validationCategoryRefused: return AppAttestRefusalReason.validationCategoryRefused.rawValue
        case .riskMetricExceeded: return AppAttestRefusalReason.riskMetricExceeded.rawValue
        case .riskMetricUnknown: return AppAttestRefusalReason.riskMetricUnknown.rawValue
        case .storage: return APIErrorCode.storageUnavailable.rawValue
        }
    }
}
