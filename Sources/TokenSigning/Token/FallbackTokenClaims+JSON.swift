public import WireFormats

extension FallbackTokenClaims {
    /// Reads the claims of a verified token from its strictly parsed payload; nil when a required claim
    /// is missing or of the wrong type, or `tier` is not a known tier. Unknown claims are ignored.
    public init?(claims: [String: JSONValue]) {
        guard let iss = claims["iss"]?.stringValue, let aud = claims["aud"]?.stringValue,
              let sub = claims["sub"]?.stringValue, let jti = claims["jti"]?.stringValue,
              let iat = claims["iat"]?.intValue, let exp = claims["exp"]?.intValue,
              let tier = claims["tier"]?.stringValue.flatMap(Tier.init(rawValue:))
        else { return nil }
        var lim: Bool?
        switch claims["lim"] {
        case nil, .null?: lim = nil
        case .bool(let b)?: lim = b
        default: return nil
        }
        var bnd: String?
        switch claims["bnd"] {
        case nil, .null?: bnd = nil
        case .string(let s)?: bnd = s
        default: return nil
        }
        var risk: Int?
        switch claims["risk"] {
        case nil, .null?: risk = nil
        case .int(let value)? where value >= 0 && value <= Int64(Int32.max): risk = Int(value)
        default: return nil
        }
        self.init(iss: iss, aud: aud, sub: sub, iat: iat, exp: exp, jti: jti, tier: tier, lim: lim, bnd: bnd, risk: risk)
    }
}
