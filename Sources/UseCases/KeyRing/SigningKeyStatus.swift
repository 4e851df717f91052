public import FoundationEssentials

/// A key of the key directory as admins see it: whether it signs, when it was made and last activated.
public struct SigningKeyStatus: Sendable, Equatable {
    public let kid: String
    /// The key this server signs with now.
    public let signing: Bool
    public let createdAt: Date
    /// When some server (this one or one sharing the directory or the ledger) last started signing with it.
    public let activatedAt: Date?

    public init(kid: String, signing: Bool, createdAt: Date, activatedAt: Date?) {
        self.kid = kid
        self.signing = signing
        self.createdAt = createdAt
        self.activatedAt = activatedAt
    }
}
