/// Why a token failed verification: the `reason` of `/v1/tokens/verify`'s `valid: false`.
public enum TokenVerificationFailure: String, Error, Sendable, CaseIterable {
    case expired
    case badSignature = "bad_signature"
    case malformed
    case unknownKey = "unknown_key"
    case wrongIssuer = "wrong_issuer"
    case wrongAudience = "wrong_audience"
    /// A `tier: debug` token shown to a server whose Apple environment is not `development` (one whose key
    /// directory is shared with a development server). Decided by the caller, which knows the environment.
    case debugTier = "debug_tier"
    /// A binding was given and the token's `bnd` does not name it (or the token has none).
    case bindingMismatch = "binding_mismatch"
}
