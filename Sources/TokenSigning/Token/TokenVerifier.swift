public import FoundationEssentials
import TwoBitsCrypto
public import WireVocabulary

/// Verifies fallback-tier tokens against a set of public keys, naming the reason on failure.
public struct TokenVerifier: Sendable {
    /// Why verification failed: the `reason` of `/v1/tokens/verify`, from the wire's vocabulary.
    public typealias Failure = TokenVerificationFailure

    let keys: [String: P256PublicKey]
    let issuer: String
    let audience: String

    public init(keys: [SigningKey], issuer: String, audience: String) {
        var map: [String: P256PublicKey] = [:]
        for key in keys { map[key.kid] = key.privateKey.publicKey }
        self.keys = map
        self.issuer = issuer
        self.audience = audience
    }

    /// Checks structure, key, signature, issuer, audience, expiry and, when a binding is given, that the token
    /// is bound to it, in that order. Without a binding a bound token is valid (its `bnd` is in the claims):
    /// a main API that does not check bindings keeps working while apps start sending them.
    public func verify(_ token: String, binding: SessionBinding? = nil, now: Date = Date()) -> Result<FallbackTokenClaims, Failure> {
        guard token.utf8.count <= 8_192, let parts = JWS.decode(token) else { return .failure(.malformed) }
        guard parts.header["alg"]?.stringValue == "ES256", let kid = parts.header["kid"]?.stringValue else { return .failure(.malformed) }
        guard let key = keys[kid] else { return .failure(.unknownKey) }
        guard key.verifyES256(signature: parts.signature, message: parts.signingInput) else { return .failure(.badSignature) }
        // A missing or unknown tier makes the token invalid, never unrestricted.
        guard let claims = FallbackTokenClaims(claims: parts.claims) else { return .failure(.malformed) }
        guard claims.iss == issuer else { return .failure(.wrongIssuer) }
        guard claims.aud == audience else { return .failure(.wrongAudience) }
        guard Int64(now.timeIntervalSince1970) < claims.exp else { return .failure(.expired) }
        if let binding, !binding.matches(claims.bnd) { return .failure(.bindingMismatch) }
        return .success(claims)
    }
}
