import Foundation
import Ledger

/// The store writes orders and revocations only with their audit event; the contract suites that are about
/// something else make them with the event the service would record.
extension PendingOrderStore {
    /// Orders `action` as `PendingOrderService` does: with its `*.pending` audit event.
    func order(_ action: PendingDeviceAction) async throws(StorageError) {
        try await orderPendingAction(action, audit: .ordered(action))
    }
}

extension AppAttestKeyStore {
    /// Revokes `keyID` as an admin does: with its `app_attest.revoke` audit event.
    func revoke(keyID: String, reason: String, now: Date) async throws(StorageError) -> Bool {
        try await revokeAppAttestKey(keyID: keyID, reason: reason, now: now, audit: .revoked(keyID: keyID, reason: reason, at: now))
    }
}

extension AuditEvent {
    /// The event of an order by install id.
    static func ordered(_ order: PendingDeviceAction) -> AuditEvent {
        AuditEvent(at: order.createdAt, client: order.client, action: .pending(order.kind), subject: order.installID, result: .pending, reason: order.reason)
    }

    /// The event of a key's revocation by "ops".
    static func revoked(keyID: String, reason: String, at: Date) -> AuditEvent {
        AuditEvent(at: at, client: "ops", action: .appAttestRevoke, subject: keyID, result: .ok, reason: reason)
    }
}
