public import TokenSigning

/// An issued token and how long it lives.
public struct IssuedToken: Sendable {
    public let token: String
    public let tier: Tier
    public let expiresIn: Int
}
