/// The claims of a fallback-tier token. `tier` is always present; a verifier must refuse a token
/// without it rather than treat the absence as "no restriction".
public struct FallbackTokenClaims: Codable, Sendable, Equatable {
    public let iss: String
    public let aud: String
    public let sub: String
    public let iat: Int64
    public let exp: Int64
    public let jti: String
    public let tier: Tier
    /// Present and true on limited-use tokens (consumable once through verify).
    public let lim: Bool?
    /// Present on tokens bound to a session: the base64url SHA-256 of the binding (`SessionBinding`).
    public let bnd: String?
    /// On `appattest` tokens of a key whose risk metric is known: Apple's latest metric (docs/app-attest.md).
    public let risk: Int?

    public init(iss: String, aud: String, sub: String, iat: Int64, exp: Int64, jti: String, tier: Tier, lim: Bool?, bnd: String? = nil,
                risk: Int? = nil) {
        self.iss = iss
        self.aud = aud
        self.sub = sub
        self.iat = iat
        self.exp = exp
        self.jti = jti
        self.tier = tier
        self.lim = lim
        self.bnd = bnd
        self.risk = risk
    }

    public var limitedUse: Bool { lim == true }
}
