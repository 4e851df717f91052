/// Where the install's App Attest key survives restarts: the Keychain on a device (`KeychainKeyStore`),
/// memory in tests (`InMemoryKeyStore`). One key per store.
public protocol KeyStore: Sendable {
    /// The stored key, if any.
    func load() async -> AttestedKey?
    /// Replaces the stored key.
    func save(_ key: AttestedKey) async
    /// Forgets the key (after `invalidKey`: a restore moved the install to a device without it).
    func remove() async
}
