import Foundation
import TwoBitsCrypto

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
