import Tokens

/// An issued token and how long it lives.
struct IssuedToken: Sendable {
    let token: String
    let tier: Tier
    let expiresIn: Int
}
