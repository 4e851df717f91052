public import WireVocabulary

/// TwoBits' answer carrying a token: attestations, assertions and fallback exchanges.
public struct TokenAnswer: Sendable, Equatable, Codable {
    /// The ES256 JWS the main API verifies against TwoBits' JWKS.
    public var token: String
    /// `appattest`, `devicecheck` or `debug`. A tier this build does not know (a newer server's) fails decoding, so
    /// the answer is refused as malformed (`RelayFailure.malformedAnswer`): the client cannot tell what such a token
    /// is good for, nor cache it by tier.
    public var tier: TokenTier
    /// Seconds until the token expires (relative, so the device's clock does not matter).
    public var expiresIn: Int
    /// Names the key in later assertions (attestations and assertions only).
    public var artifact: String?
    /// The key's counter now (attestations and assertions only).
    public var counter: Int?

    public init(token: String, tier: TokenTier, expiresIn: Int, artifact: String? = nil, counter: Int? = nil) {
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
