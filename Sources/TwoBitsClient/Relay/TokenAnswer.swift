/// TwoBits' answer carrying a token: attestations, assertions and fallback exchanges.
public struct TokenAnswer: Sendable, Equatable, Codable {
    /// The ES256 JWS the main API verifies against TwoBits' JWKS.
    public var token: String
    /// `appattest`, `devicecheck` or `debug`.
    public var tier: String
    /// Seconds until the token expires (relative, so the device's clock does not matter).
    public var expiresIn: Int
    /// Names the key in later assertions (attestations and assertions only).
    public var artifact: String?
    /// The key's counter now (attestations and assertions only).
    public var counter: Int?

    public init(token: String, tier: String, expiresIn: Int, artifact: String? = nil, counter: Int? = nil) {
        self.token = token
        self.tier = tier
        self.expiresIn = expiresIn
        self.artifact = artifact
        self.counter = counter
    }

    enum CodingKeys: String, CodingKey {
        case token, tier, artifact, counter
        case expiresIn = "expires_in"
    }
}
