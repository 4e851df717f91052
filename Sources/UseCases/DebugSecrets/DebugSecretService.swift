public import DeviceCheckModel
public import FoundationEssentials
public import Ledger
import TwoBitsCrypto
import WireFormats

/// Debug secrets: named credentials that get debug-tier tokens while `apple.environment` is development.
/// A secret is returned once; only its digest is stored.
public struct DebugSecretService: Sendable {
    public static let maxDebugSecrets = 20

    let ledger: any DebugSecretStore & AuditLog
    let environment: AppleEnvironment

    public init(ledger: any DebugSecretStore & AuditLog, environment: AppleEnvironment) {
        self.ledger = ledger
        self.environment = environment
    }

    /// Creates a debug secret and returns it (the only time it is seen).
    public func create(name: String, client: String) async throws(DebugSecretError) -> String {
        guard (1...64).contains(name.utf8.count), name.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x41 && $0 <= 0x5A) || $0 == 0x2D || $0 == 0x5F || $0 == 0x2E }) else {
            throw .invalidName
        }
        let secret = "dbg_" + SecureRandom.bytes(32).base64URLEncodedString()
        let count: Int
        do { count = try await ledger.debugSecretNames().count } catch { throw .storage(error) }
        guard count < Self.maxDebugSecrets else { throw .tooMany(limit: Self.maxDebugSecrets) }
        let added: Bool
        do { added = try await ledger.addDebugSecret(name: name, digest: SHA256Digest.hex(secret), now: Date()) } catch { throw .storage(error) }
        guard added else { throw .exists(name: name) }
        do { try await ledger.record(AuditEvent(client: client, action: .debugSecretCreate, subject: name, result: .ok)) } catch { throw .storage(error) }
        return secret
    }

    public func names() async throws(DebugSecretError) -> [(name: String, createdAt: Date)] {
        do { return try await ledger.debugSecretNames() } catch { throw .storage(error) }
    }

    public func delete(name: String, client: String) async throws(DebugSecretError) {
        let deleted: Bool
        do { deleted = try await ledger.deleteDebugSecret(name: name) } catch { throw .storage(error) }
        guard deleted else { throw .notFound(name: name) }
        do { try await ledger.record(AuditEvent(client: client, action: .debugSecretDelete, subject: name, result: .ok)) } catch { throw .storage(error) }
    }

    /// How many debug secrets exist that this server refuses (production), for a start-up warning.
    public func refusedByEnvironment() async -> Int {
        guard environment == .production, let names = try? await ledger.debugSecretNames() else { return 0 }
        return names.count
    }
}
