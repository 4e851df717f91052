public import Foundation
public import Ledger

// TEMPORARY: the lead's stand-in with the agreed API, removed when the real ledger merges.
public final class PostgresLedger: Ledger {
    public init(uri: String, poolSize: Int = 8, poolWait: Duration = .seconds(2), applyMigrations: Bool = true) throws(StorageError) {
        throw StorageError("PostgreSQL ledger not built yet")
    }
    public static func migrate(uri: String) throws(StorageError) -> (from: Int, to: Int) { throw StorageError("no") }
    public func checkHealth() async throws(StorageError) { throw StorageError("no") }
    public func recordWriteIntent(_ intent: WriteIntent) async throws(StorageError) { throw StorageError("no") }
    public func resolveWriteIntent(id: String, result: String, bitsAfter: String?, reason: String?, transactionID: String?) async throws(StorageError) { throw StorageError("no") }
    public func unknownWriteIntents(tokenPrefix: String, limit: Int) async throws(StorageError) -> [WriteIntent] { throw StorageError("no") }
    public func markInterruptedWriteIntents(reason: String) async throws(StorageError) -> Int { throw StorageError("no") }
    public func record(_ event: AuditEvent) async throws(StorageError) -> Int64 { throw StorageError("no") }
    public func auditEvents(limit: Int, before: Int64?) async throws(StorageError) -> [AuditEvent] { throw StorageError("no") }
    public func beginIdempotent(client: String, key: String, requestHash: String, owner: String, now: Date) async throws(StorageError) -> IdempotencyBegin { throw StorageError("no") }
    public func recordIntent(client: String, key: String, intent: String) async throws(StorageError) { throw StorageError("no") }
    public func completeIdempotent(client: String, key: String, status: Int, body: Data) async throws(StorageError) { throw StorageError("no") }
    public func abandonIdempotent(client: String, key: String) async throws(StorageError) { throw StorageError("no") }
    public func setPendingAction(_ action: PendingDeviceAction) async throws(StorageError) { throw StorageError("no") }
    public func pendingActions() async throws(StorageError) -> [PendingDeviceAction] { throw StorageError("no") }
    public func pendingAction(installID: String) async throws(StorageError) -> PendingDeviceAction? { throw StorageError("no") }
    public func removePendingAction(installID: String) async throws(StorageError) { throw StorageError("no") }
    public func rememberDeviceToken(digest: String, until: Date, now: Date) async throws(StorageError) -> Bool { throw StorageError("no") }
    public func forgetDeviceToken(digest: String) async throws(StorageError) { throw StorageError("no") }
    public func consumeTokenID(_ jti: String, until: Date, now: Date) async throws(StorageError) -> Bool { throw StorageError("no") }
    public func addDebugSecret(name: String, digest: String, now: Date) async throws(StorageError) -> Bool { throw StorageError("no") }
    public func debugSecretNames() async throws(StorageError) -> [(name: String, createdAt: Date)] { throw StorageError("no") }
    public func deleteDebugSecret(name: String) async throws(StorageError) -> Bool { throw StorageError("no") }
    public func debugSecretName(digest: String) async throws(StorageError) -> String? { throw StorageError("no") }
    public func recordKeyActivation(kid: String, at: Date) async throws(StorageError) { throw StorageError("no") }
    public func keyActivations() async throws(StorageError) -> [String: Date] { throw StorageError("no") }
}
