/// What an accepted attestation or assertion gets back.
public struct AppAttestIssue: Sendable {
    /// The `appattest` token.
    public let token: IssuedToken
    /// Opaque to the client: sent back with later assertions instead of the key id (Firebase's shape).
    public let artifact: String
    /// The key's counter after this request (0 after an attestation).
    public let counter: UInt32
}
