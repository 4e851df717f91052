public import FoundationEssentials
public import Ledger
public import Policy

/// Pending bans and unbans by install id as the admin API sees them: ordering one, the list, and withdrawing
/// one; applying it is the next install's (`DeviceAdmission`).
public struct PendingOrderService: Sendable {
    let rules: BitRules
    let ledger: any PendingOrderStore
    let now: @Sendable () -> Date

    public init(rules: BitRules, ledger: any PendingOrderStore, now: @escaping @Sendable () -> Date = { Date() }) {
        self.rules = rules
        self.ledger = ledger
        self.now = now
    }

    /// Orders a ban or unban for an install id, applied when that install next shows a device token. The order
    /// and its audit event (`ban.pending` / `unban.pending`) are written in one transaction.
    public func order(_ kind: PendingDeviceAction.Kind, installID: String, reason: String?, client: String) async throws(PolicyError) -> BanOutcome {
        try rules.requireBanMeaning()
        let at = now()
        do {
            try await ledger.orderPendingAction(PendingDeviceAction(installID: installID, kind: kind, reason: reason, client: client, createdAt: at),
                                                audit: AuditEvent(at: at, client: client, action: .pending(kind), subject: installID, result: .pending, reason: reason))
        } catch { throw .storage(error) }
        return BanOutcome(banned: kind == .ban, applied: false)
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
