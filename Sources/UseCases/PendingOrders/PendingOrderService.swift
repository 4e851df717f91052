public import Ledger

/// Pending bans and unbans by install id as the admin API sees them: the list, and withdrawing one. Ordering
/// one is the policy's (`BitPolicy.orderPending`), applying it the next install's.
public struct PendingOrderService: Sendable {
    let ledger: any PendingOrderStore

    public init(ledger: any PendingOrderStore) {
        self.ledger = ledger
    }

    /// Every pending order, newest first.
    public func pendingOrders() async throws(StorageError) -> [PendingDeviceAction] {
        try await ledger.pendingActions()
    }

    /// Withdraws the order for `installID` on behalf of `client`, its audit event (`pending.cancel`) written in
    /// the same transaction; nil, with nothing written, when there is none.
    public func withdraw(installID: String, client: String) async throws(StorageError) -> PendingDeviceAction? {
        try await ledger.withdrawPendingAction(installID: installID) { order in
            AuditEvent(client: client, action: .pendingCancelled, subject: installID, result: .ok,
                       reason: "\(order.kind.rawValue) ordered by \(order.client) withdrawn")
        }
    }
}
