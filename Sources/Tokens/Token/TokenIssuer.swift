import Foundation
import TwoBitsCrypto

/// Signs fallback-tier tokens: ES256 JWS with `kid` and `typ: JWT`.
public struct TokenIssuer: Sendable {
    public let key: SigningKey
    private let signer: ES256Signer
    public let issuer: String
    public let audience: String

    public init(key: SigningKey, issuer: String, audience: String) {
        self.key = key
        self.signer = ES256Signer(key: key.privateKey)
        self.issuer = issuer
        self.audience = audience
    }

    /// Issues a token for `subject` living `ttlSeconds`.
    public func issue(subject: String, tier: Tier, limitedUse: Bool, ttlSeconds: Int, now: Date = Date()) -> (token: String, claims: FallbackTokenClaims) {
        let iat = Int64(now.timeIntervalSince1970)
        let claims = FallbackTokenClaims(iss: issuer, aud: audience, sub: subject, iat: iat, exp: iat + Int64(ttlSeconds),
                                         jti: SecureRandom.bytes(16).base64URLEncodedString(), tier: tier, lim: limitedUse ? true : nil)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let header = #"{"alg":"ES256","kid":"\#(key.kid)","typ":"JWT"}"#
        let payload = (try? encoder.encode(claims)) ?? Data()
        return (JWS.sign(headerJSON: Data(header.utf8), claimsJSON: payload, signer: signer), claims)
    }
}
