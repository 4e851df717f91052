import FoundationEssentials

/// The document served at `/.well-known/jwks.json`.
public struct JWKSet: Codable, Sendable, Equatable {
    public let keys: [JWK]
    public init(keys: [JWK]) { self.keys = keys }
}
