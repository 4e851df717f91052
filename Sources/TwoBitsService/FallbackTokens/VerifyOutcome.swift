import Tokens

/// The answer of `POST /v1/fallback-tokens/verify`.
enum VerifyOutcome: Sendable {
    case valid(FallbackTokenClaims, alreadyConsumed: Bool)
    case invalid(TokenVerifier.Failure)
}
