public import FoundationEssentials
public import TwoBitsCrypto

/// One of TwoBits' own token-signing keys (never the Apple key).
public struct SigningKey: Sendable {
    public let kid: String
    public let createdAt: Date
    public let path: String
    public let privateKey: P256PrivateKey
    public let jwk: JWK

    init(privateKey: P256PrivateKey, createdAt: Date, path: String) {
        self.privateKey = privateKey
        self.jwk = JWK(publicKey: privateKey.publicKey)
        self.kid = jwk.kid
        self.createdAt = createdAt
        self.path = path
    }
}
