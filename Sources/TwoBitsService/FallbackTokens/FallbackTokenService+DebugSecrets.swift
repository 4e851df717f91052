import Foundation
import Ledger
import TwoBitsCrypto

extension FallbackTokenService {
    static let maxDebugSecrets = 20

    /// Creates a debug secret; the secret is returned once and only its digest is stored.
    func createDebugSecret(name: String, client: String) async throws(APIError) -> String {
        guard (1...64).contains(name.utf8.count), name.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x41 && $0 <= 0x5A) || $0 == 0x2D || $0 == 0x5F || $0 == 0x2E }) else {
            throw .badRequest("name must be 1-64 characters of A-Z a-z 0-9 . _ -")
        }
        let secret = "dbg_" + SecureRandom.bytes(32).base64URLEncodedString()
        do {
            guard try await ledger.debugSecretNames().count < Self.maxDebugSecrets else {
                throw APIError(409, "too_many_debug_secrets", "at most \(Self.maxDebugSecrets) debug secrets; delete one first")
            }
            guard try await ledger.addDebugSecret(name: name, digest: SHA256.hex(secret), now: Date()) else {
                throw APIError(409, "debug_secret_exists", "a debug secret named \(name) exists; delete it first to replace it")
            }
            try await ledger.record(AuditEvent(client: client, action: .debugSecretCreate, subject: name, result: "ok"))
        } catch let error as APIError { throw error } catch let error as StorageError { throw APIError(.storage(error)) } catch {
            throw APIError(500, "internal_error", "\(error)")
        }
        return secret
    }

    func debugSecretNames() async throws(APIError) -> [(name: String, createdAt: Date)] {
        do { return try await ledger.debugSecretNames() } catch { throw APIError(.storage(error)) }
    }

    func deleteDebugSecret(name: String, client: String) async throws(APIError) {
        do {
            guard try await ledger.deleteDebugSecret(name: name) else { throw APIError(404, "not_found", "no debug secret named \(name)") }
            try await ledger.record(AuditEvent(client: client, action: .debugSecretDelete, subject: name, result: "ok"))
        } catch let error as APIError { throw error } catch let error as StorageError { throw APIError(.storage(error)) } catch {
            throw APIError(500, "internal_error", "\(error)")
        }
    }
}
