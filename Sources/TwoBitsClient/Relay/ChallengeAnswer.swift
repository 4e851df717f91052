/// TwoBits' answer to a challenge request.
public struct ChallengeAnswer: Sendable, Equatable, Codable {
    /// 32 random bytes in base64url, usable once.
    public var challenge: String
    /// Seconds the challenge stays usable.
    public var expiresIn: Int
    /// Whether this install should attest a key now (`app_attest.rollout` and the attestation cap); nil from
    /// an older TwoBits, read as true. An app that already holds an attested key asserts whatever it says.
    public var enroll: Bool?

    public init(challenge: String, expiresIn: Int, enroll: Bool? = nil) {
        self.challenge = challenge
        self.expiresIn = expiresIn
        self.enroll = enroll
    }

    enum CodingKeys: String, CodingKey {
        case challenge, enroll
        case expiresIn = "expires_in"
    }
}
