public import FoundationEssentials
import TwoBitsCrypto

/// Verifies fallback-tier tokens against a set of public keys, naming the reason on failure.
public struct TokenVerifier: Sendable {
    public enum Failure: String, Error, Sendable {
        case expired
        case badSignature = "bad_signature"
        case malformed
        case unknownKey = "unknown_key"
        case wrongIssuer = "wrong_issuer"
        case wrongAudience = "wrong_audience"
        /// A `tier: debug` token shown to a server whose Apple environment is not `development` (one whose key
        /// directory is shared with a development server). Decided by the caller, which knows the environment.
        case debugTier = "debug_tier"
    }

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

    /// Checks structure, key, signature, issuer, audience and expiry, in that order.
    public func verify(_ token: String, now: Date = Date()) -> Result<FallbackTokenClaims, Failure> {
        guard token.utf8.count <= 8_192, let parts = JWS.decode(token) else { return .failure(.malformed) }
        guard parts.header["alg"]?.stringValue == "ES256", let kid = parts.header["kid"]?.stringValue else { return .failure(.malformed) }
        guard let key = keys[kid] else { return .failure(.unknownKey) }
        guard key.verifyES256(signature: parts.signature, message: parts.signingInput) else { return .failure(.badSignature) }
        // A missing or unknown tier makes the token invalid, never unrestricted.
        guard let claims = FallbackTokenClaims(claims: parts.claims) else { return .failure(.malformed) }
        guard claims.iss == issuer else { return .failure(.wrongIssuer) }
        guard claims.aud == audience else { return .failure(.wrongAudience) }
        guard Int64(now.timeIntervalSince1970) < claims.exp else { return .failure(.expired) }
        return .success(claims)
    }
}
