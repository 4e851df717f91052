import Ledger

extension BitPolicy {
    /// Whether a pending order may be applied to a device in `meaning`. A ban always may. An unban by
    /// install id lifts only a ban of the same kind: the device must be banned, and the last ban or
    /// unban applied through this install id must be a ban. A device banned by its token or by the
    /// reinstall counter keeps its ban; the order stays pending (an admin unbans such a device by token).
    func mayApply(_ pending: PendingDeviceAction, to meaning: DeviceMeaning) async throws(PolicyError) -> Bool {
        guard pending.kind == .unban else { return true }
        guard meaning.banned else { return false }
        return try await lastAppliedOrder(installID: pending.installID) == .ban
    }

    /// The kind of the newest order applied to a device through `installID`, from the audit trail
    /// (newest first, a page at a time: this runs only while an unban is pending for the install).
    /// An order that may have been applied (`unknown`, `pending`) counts: an unban of unknown outcome may
    /// have lifted the ban, and a ban banned since is then of another kind; a ban of unknown outcome is not
    /// known to be the device's ban. Either way the unban is not applied (nil for a ban not known `ok`).
    func lastAppliedOrder(installID: String) async throws(PolicyError) -> PendingDeviceAction.Kind? {
        var before: Int64?
        while true {
            let page: [AuditEvent]
            do { page = try await ledger.auditEvents(limit: 1_000, before: before) } catch { throw .storage(error) }
            for event in page where event.subject == installID && [.ok, .unknown, .pending].contains(event.result) {
                if event.knownAction == .banApplied { return event.result == .ok ? .ban : nil }
                if event.knownAction == .unbanApplied { return .unban }
            }
            guard page.count == 1_000, let last = page.last else { return nil }
            before = last.id
        }
    }
}
