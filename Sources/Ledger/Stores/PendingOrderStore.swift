/// Pending bans and unbans by install id, applied when the device next installs. Every order and withdrawal
/// comes with its audit event, in the same transaction: the store has no unaudited way to write one.
public protocol PendingOrderStore: Sendable {
    /// Sets the order (replacing one for the same install id) and records `audit` in the same transaction: no
    /// order without its audit event, and no audit event of an order that was not stored.
    func orderPendingAction(_ action: PendingDeviceAction, audit: AuditEvent) async throws(StorageError)
    func pendingActions() async throws(StorageError) -> [PendingDeviceAction]
    func pendingAction(installID: String) async throws(StorageError) -> PendingDeviceAction?
    func removePendingAction(installID: String) async throws(StorageError)
    /// Withdraws the order for `installID` and records `audit(order)` in the same transaction: no withdrawal
    /// goes unaudited, and of several processes racing to withdraw it exactly one gets it. Nil, with nothing
    /// written, when there is none.
    func withdrawPendingAction(installID: String,
                               audit: @escaping @Sendable (PendingDeviceAction) -> AuditEvent) async throws(StorageError) -> PendingDeviceAction?
    /// Takes the order for `installID` for this process to apply: nil when there is none, or when a live
    /// process (this one, or another replica) has taken it and is applying it. An order taken by a process
    /// that died is taken over. Exactly one of several processes racing for it gets it.
    func claimPendingAction(installID: String) async throws(StorageError) -> PendingDeviceAction?
    /// After the write: removes the order this process took (not a newer one set since).
    func completePendingAction(installID: String) async throws(StorageError)
    /// After a failed or skipped write: gives the order this process took back, for the next install.
    func releasePendingAction(installID: String) async throws(StorageError)
}
