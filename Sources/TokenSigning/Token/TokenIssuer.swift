public import FoundationEssentials
import TwoBitsCrypto
import WireFormats

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

    /// Issues a token for `subject` living `ttlSeconds`, bound to `binding` (claim `bnd`) when given.
    public func issue(subject: String, tier: Tier, limitedUse: Bool, ttlSeconds: Int, binding: SessionBinding? = nil,
                      risk: Int? = nil, now: Date = Date()) -> (token: String, claims: FallbackTokenClaims) {
        let iat = Int64(now.timeIntervalSince1970)
        let claims = FallbackTokenClaims(iss: issuer, aud: audience, sub: subject, iat: iat, exp: iat + Int64(ttlSeconds),
                                         jti: SecureRandom.base64URL(bytes: 16), tier: tier, lim: limitedUse ? true : nil,
                                         bnd: binding?.claim, risk: risk)
        return (JWS.sign(headerJSON: header, claimsJSON: Self.payload(claims), signer: signer), claims)
    }

    /// The claims as JSON, keys sorted, written directly (an encoder costs more than the signature).
    static func payload(_ c: FallbackTokenClaims) -> Data {
        var json = [UInt8]()
        json.reserveCapacity(256)
        json.append(contentsOf: #"{"aud":"#.utf8)
        JSONString.append(c.aud, to: &json)
        if let bnd = c.bnd {
            json.append(contentsOf: #","bnd":"#.utf8)
            JSONString.append(bnd, to: &json)
        }
        json.append(contentsOf: #","exp":"#.utf8)
        json.append(contentsOf: String(c.exp).utf8)
        json.append(contentsOf: #","iat":"#.utf8)
        json.append(contentsOf: String(c.iat).utf8)
        json.append(contentsOf: #","iss":"#.utf8)
        JSONString.append(c.iss, to: &json)
        json.append(contentsOf: #","jti":"#.utf8)
        JSONString.append(c.jti, to: &json)
        if let lim = c.lim { json.append(contentsOf: (lim ? #","lim":true"# : #","lim":false"#).utf8) }
        if let risk = c.risk {
            json.append(contentsOf: #","risk":"#.utf8)
            json.append(contentsOf: String(risk).utf8)
        }
        json.append(contentsOf: #","sub":"#.utf8)
        JSONString.append(c.sub, to: &json)
        json.append(contentsOf: #","tier":"#.utf8)
        JSONString.append(c.tier.rawValue, to: &json)
        json.append(0x7D)
        return Data(json)
    }
}
