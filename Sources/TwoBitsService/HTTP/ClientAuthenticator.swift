import FoundationEssentials
import TwoBitsCrypto

/// Checks `Authorization: Bearer <API key>` against the configured SHA-256 digests in constant time.
struct ClientAuthenticator: Sendable {
    let clients: [ServiceConfiguration.Client]

    func authenticate(_ authorization: String?) -> AuthenticatedClient? {
        guard let authorization, authorization.hasPrefix("Bearer ") else { return nil }
        // Spaces and tabs around the key are not part of it (byte-level: this runs on every request).
        var key = authorization.utf8.dropFirst("Bearer ".utf8.count)
        while let first = key.first, first == 0x20 || first == 0x09 { key = key.dropFirst() }
        while let last = key.last, last == 0x20 || last == 0x09 { key = key.dropLast() }
        guard !key.isEmpty, key.count <= 512 else { return nil }
        let digest = SHA256Digest.hash(Data(key))
        // Compare against every client so the time taken does not reveal which one matched.
        var found: ServiceConfiguration.Client?
        for client in clients where ConstantTime.equal(client.keySHA256, digest) { found = client }
        return found.map { AuthenticatedClient(name: $0.name, roles: $0.roles) }
    }
}
