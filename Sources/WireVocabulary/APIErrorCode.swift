/// A code of the error envelope every route answers with (`{"error":{"code":…,"message":…}}`): the stable
/// text clients branch on, so codes compare as values of this type and are spelled once, here.
///
/// A struct rather than an enum (as jwt-kit's `JWTError.ErrorType`): a client reads codes of a newer server
/// (or of the main API in front of it) without failing, and an app can still `switch` over the known ones.
public struct APIErrorCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The code as sent (snake_case).
    public let rawValue: String

    /// Any code, also one this version does not name (what a client reads from an answer).
    public init(rawValue: String) { self.rawValue = rawValue }

    public var description: String { rawValue }

    // The request.
    public static let badRequest = APIErrorCode(rawValue: "bad_request")
    public static let invalidDeviceToken = APIErrorCode(rawValue: "invalid_device_token")
    public static let confirmationMismatch = APIErrorCode(rawValue: "confirmation_mismatch")
    public static let unauthorized = APIErrorCode(rawValue: "unauthorized")
    public static let forbidden = APIErrorCode(rawValue: "forbidden")
    public static let notFound = APIErrorCode(rawValue: "not_found")
    public static let methodNotAllowed = APIErrorCode(rawValue: "method_not_allowed")
    public static let payloadTooLarge = APIErrorCode(rawValue: "payload_too_large")
    public static let unsupportedMediaType = APIErrorCode(rawValue: "unsupported_media_type")
    // Apple, the limits and the server's state.
    public static let appleAuthFailed = APIErrorCode(rawValue: "apple_auth_failed")
    public static let appleUnavailable = APIErrorCode(rawValue: "apple_unavailable")
    public static let rateLimited = APIErrorCode(rawValue: "rate_limited")
    public static let shuttingDown = APIErrorCode(rawValue: "shutting_down")
    public static let notEnabled = APIErrorCode(rawValue: "not_enabled")
    // Promotions and bans.
    public static let unknownPromotion = APIErrorCode(rawValue: "unknown_promotion")
    public static let promotionNotActive = APIErrorCode(rawValue: "promotion_not_active")
    public static let alreadyClaimed = APIErrorCode(rawValue: "already_claimed")
    public static let deviceBanned = APIErrorCode(rawValue: "device_banned")
    public static let storageUnavailable = APIErrorCode(rawValue: "storage_unavailable")
    public static let idempotencyKeyConflict = APIErrorCode(rawValue: "idempotency_key_conflict")
    public static let requestInProgress = APIErrorCode(rawValue: "request_in_progress")
    // Tokens and debug secrets.
    public static let deviceTokenReused = APIErrorCode(rawValue: "device_token_reused")
    public static let debugDisabled = APIErrorCode(rawValue: "debug_disabled")
    public static let invalidDebugSecret = APIErrorCode(rawValue: "invalid_debug_secret")
    public static let tooManyDebugSecrets = APIErrorCode(rawValue: "too_many_debug_secrets")
    public static let debugSecretExists = APIErrorCode(rawValue: "debug_secret_exists")
    // App Attest (the refusal's reason rides along: `AppAttestRefusalReason`).
    public static let attestationInvalid = APIErrorCode(rawValue: "attestation_invalid")
    public static let assertionInvalid = APIErrorCode(rawValue: "assertion_invalid")
    public static let keyAlreadyAttested = APIErrorCode(rawValue: "key_already_attested")
    public static let deviceTokenRequired = APIErrorCode(rawValue: "device_token_required")
    // The HTTP edge, before any handler ran.
    public static let internalError = APIErrorCode(rawValue: "internal_error")
    public static let uriTooLong = APIErrorCode(rawValue: "uri_too_long")
    public static let headersTooLarge = APIErrorCode(rawValue: "headers_too_large")
    public static let httpVersionNotSupported = APIErrorCode(rawValue: "http_version_not_supported")
    public static let lengthRequired = APIErrorCode(rawValue: "length_required")
    /// A claim's handler cancelled before Apple was written to: only ever seen by a handler whose client already
    /// has its answer (a deadline's, or shutdown's), so it is in no answer and not in `all`.
    public static let cancelled = APIErrorCode(rawValue: "cancelled")

    /// Every code TwoBits sends, in docs/openapi.yaml's order (a test holds the two equal).
    public static let all: [APIErrorCode] = [
        .badRequest, .invalidDeviceToken, .confirmationMismatch, .unauthorized, .forbidden, .notFound, .methodNotAllowed,
        .payloadTooLarge, .unsupportedMediaType, .appleAuthFailed, .appleUnavailable, .rateLimited, .shuttingDown, .notEnabled,
        .unknownPromotion, .promotionNotActive, .alreadyClaimed, .deviceBanned, .storageUnavailable, .idempotencyKeyConflict,
        .requestInProgress, .deviceTokenReused, .debugDisabled, .invalidDebugSecret, .tooManyDebugSecrets, .debugSecretExists,
        .attestationInvalid, .assertionInvalid, .keyAlreadyAttested, .deviceTokenRequired, .internalError, .uriTooLong,
        .headersTooLarge, .httpVersionNotSupported, .lengthRequired,
    ]
}
