public import FoundationEssentials

/// A one-time challenge: 32 random bytes, base64url, for one attestation or one assertion.
public struct IssuedChallenge: Sendable, Equatable {
    public let value: String
    public let expiresAt: Date
}
