/// What a reload of the key directory changed.
public struct KeyReload: Sendable, Equatable {
    /// The key that signs from now on.
    public let signingKID: String
    /// The key it replaced; nil when the signing key did not change.
    public let replacedKID: String?
    /// How many keys the directory holds.
    public let keyCount: Int
}
