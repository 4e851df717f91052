/// A key store that lives as long as the process: for tests, and for apps that attest on every launch.
public actor InMemoryKeyStore: KeyStore {
    private var key: AttestedKey?

    public init(_ key: AttestedKey? = nil) { self.key = key }

    public func load() -> AttestedKey? { key }
    public func save(_ key: AttestedKey) { self.key = key }
    public func remove() { key = nil }
}
