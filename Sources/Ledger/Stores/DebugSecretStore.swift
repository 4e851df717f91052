public import FoundationEssentials

/// Debug secrets, stored as SHA-256 digests.
public protocol DebugSecretStore: Sendable {
    func addDebugSecret(name: String, digest: String, now: Date) async throws(StorageError) -> Bool
    func debugSecretNames() async throws(StorageError) -> [(name: String, createdAt: Date)]
    func deleteDebugSecret(name: String) async throws(StorageError) -> Bool
    func debugSecretName(digest: String) async throws(StorageError) -> String?
}
