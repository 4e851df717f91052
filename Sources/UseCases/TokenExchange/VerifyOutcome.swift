public import TokenSigning

/// What a verification found.
public enum VerifyOutcome: Sendable {
    case valid(FallbackTokenClaims, alreadyConsumed: Bool)
    case invalid(TokenVerifier.Failure)
}
