/// TwoBits' answer to a challenge request.
public struct ChallengeAnswer: Sendable, Equatable, Codable {
    /// 32 random bytes in base64url, usable once.
    public var challenge: String
    /// Seconds the challenge stays usable.
    public var expiresIn: Int

    public init(challenge: String, expiresIn: Int) {
        self.challenge = challenge
        self.expiresIn = expiresIn
    }

    enum CodingKeys: String, CodingKey {
        case challenge
        case expiresIn = "expires_in"
    }
}
