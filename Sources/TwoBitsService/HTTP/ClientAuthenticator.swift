import FoundationEssentials
import TwoBitsCrypto

/// Checks `Authorization: Bearer <API key>` against the configured SHA-256 digests in constant time.
struct ClientAuthenticator: Sendable {
    let clients: [ServiceConfiguration.Client]

    /// True for `Bearer` followed by more than one space, or a key holding a space or tab (`Bearer  key`,
    /// `Bearer a b`): RFC 6750 allows more spaces, but a proxy or logger in front may read another key from
    /// it than this server would, so there is one accepted form. Byte-level: this runs on every request.
    static func isMalformed(_ authorization: String?) -> Bool {
        guard let key = authorization.flatMap(Self.key) else { return false }
        return key.contains(where: { $0 == 0x20 || $0 == 0x09 })
    }

    /// What follows `Bearer `, less trailing spaces and tabs (libmicrohttpd keeps them in the value; they are
    /// not part of it, RFC 9110 §5.5); nil for another scheme.
    private static func key(_ authorization: String) -> Substring.UTF8View? {
        guard authorization.hasPrefix("Bearer ") else { return nil }
        var key = authorization.utf8.dropFirst("Bearer ".utf8.count)
        while let last = key.last, last == 0x20 || last == 0x09 { key = key.dropLast() }
        return key
    }

    func authenticate(_ authorization: String?) -> AuthenticatedClient? {
        guard let key = authorization.flatMap(Self.key), !Self.isMalformed(authorization) else { return nil }
        guard !key.isEmpty, key.count <= 512 else { return nil }
        let digest = SHA256Digest.hash(Data(key))
        // Compare against every client so the time taken does not reveal which one matched.
        var found: ServiceConfiguration.Client?
        for client in clients where ConstantTime.equal(client.keySHA256, digest) { found = client }
        return found.map { AuthenticatedClient(name: $0.name, roles: $0.roles) }
    }
}
