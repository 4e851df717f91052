import Foundation
import TwoBitsCrypto

/// Signs fallback-tier tokens: ES256 JWS with `kid` and `typ: JWT`.
public struct TokenIssuer: Sendable {
    public let key: SigningKey
    private let signer: ES256Signer
    public let issuer: String
    public let audience: String

    private let header: Data

    public init(key: SigningKey, issuer: String, audience: String) {
        self.key = key
        self.header = Data(#"{"alg":"ES256","kid":"\#(key.kid)","typ":"JWT"}"#.utf8)
        self.signer = ES256Signer(key: key.privateKey)
        self.issuer = issuer
        self.audience = audience
    }

    /// Issues a token for `subject` living `ttlSeconds`.
    public func issue(subject: String, tier: Tier, limitedUse: Bool, ttlSeconds: Int, now: Date = Date()) -> (token: String, claims: FallbackTokenClaims) {
        let iat = Int64(now.timeIntervalSince1970)
        let claims = FallbackTokenClaims(iss: issuer, aud: audience, sub: subject, iat: iat, exp: iat + Int64(ttlSeconds),
                                         jti: SecureRandom.bytes(16).base64URLEncodedString(), tier: tier, lim: limitedUse ? true : nil)
        return (JWS.sign(headerJSON: header, claimsJSON: Self.payload(claims), signer: signer), claims)
    }

    /// The claims as JSON, keys sorted, written directly (an encoder costs more than the signature).
    static func payload(_ c: FallbackTokenClaims) -> Data {
        var json = #"{"aud":"# + JSONString.quote(c.aud) + #","exp":"# + String(c.exp) + #","iat":"# + String(c.iat)
            + #","iss":"# + JSONString.quote(c.iss) + #","jti":"# + JSONString.quote(c.jti)
        if let lim = c.lim { json += #","lim":"# + (lim ? "true" : "false") }
        json += #","sub":"# + JSONString.quote(c.sub) + #","tier":"# + JSONString.quote(c.tier.rawValue) + "}"
        return Data(json.utf8)
    }
}
