import Foundation
import TwoBitsCrypto

/// A caller identified by its API key.
public struct AuthenticatedClient: Sendable {
    public let name: String
    public let roles: Set<ClientRole>
}

/// Checks `Authorization: Bearer <API key>` against the configured SHA-256 digests in constant time.
struct ClientAuthenticator: Sendable {
    let clients: [ServiceConfiguration.Client]

    func authenticate(_ authorization: String?) -> AuthenticatedClient? {
        guard let authorization, authorization.hasPrefix("Bearer ") else { return nil }
        let key = authorization.dropFirst("Bearer ".count).trimmingCharacters(in: .whitespaces)
        guard !key.isEmpty, key.utf8.count <= 512 else { return nil }
        let digest = SHA256.hash(Data(key.utf8))
        // Compare against every client so the time taken does not reveal which one matched.
        var found: ServiceConfiguration.Client?
        for client in clients where ConstantTime.equal(client.keySHA256, digest) { found = client }
        return found.map { AuthenticatedClient(name: $0.name, roles: $0.roles) }
    }
}

/// API keys for clients.
public enum APIKey {
    /// A fresh random key (256 bits, base64url, prefixed `tb_`) and its SHA-256 hex digest for `key_sha256`.
    public static func generate() -> (key: String, sha256: String) {
        let key = "tb_" + SecureRandom.bytes(32).base64URLEncodedString()
        return (key, SHA256.hex(key))
    }
}
