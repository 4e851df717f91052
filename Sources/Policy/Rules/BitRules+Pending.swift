public import DeviceCheckModel
public import Ledger

extension BitRules {
    /// Whether deciding on `pending` needs the newest order applied through its install id
    /// (`lastAppliedOrder(installID:in:)`): only an unban of a banned device does.
    public func needsOrderHistory(_ pending: PendingDeviceAction, on meaning: DeviceMeaning) -> Bool {
        pending.kind == .unban && meaning.banned
    }

    /// Whether a pending order applies to a device in `meaning`, and the bits it writes in `month`. A ban always
    /// applies. An unban by install id lifts only a ban of the same kind: the device must be banned, and the last
    /// ban or unban applied through this install id (`lastApplied`) must be a ban. A device banned by its token or
    /// by the reinstall counter keeps its ban; the order stays pending (an admin unbans such a device by token).
    public func decide(_ pending: PendingDeviceAction, on meaning: DeviceMeaning, in month: YearMonth,
                       lastApplied: PendingDeviceAction.Kind?) -> PendingDecision {
        if pending.kind == .unban {
            guard meaning.banned, lastApplied == .ban else { return .keep }
        }
        return .apply(bits(baseBits(for: meaning, in: month), banned: pending.kind == .ban))
    }

    /// The newest order applied to a device through `installID` in `page` (audit events, newest first).
    /// An order that may have been applied (`unknown`, `pending`) counts: an unban of unknown outcome may
    /// have lifted the ban, and a ban banned since is then of another kind; a ban of unknown outcome is not
    /// known to be the device's ban. Either way the unban is not applied (`.found(nil)` for a ban not known `ok`).
    public static func lastAppliedOrder(installID: String, in page: [AuditEvent]) -> OrderHistoryScan {
        for event in page where event.subject == installID && [.ok, .unknown, .pending].contains(event.result) {
            if event.knownAction == .banApplied { return .found(event.result == .ok ? .ban : nil) }
            if event.knownAction == .unbanApplied { return .found(.unban) }
        }
        return .notInPage
    }

    /// The audit event of applying `pending` (its result set when the write is carried out).
    public static func appliedEvent(_ pending: PendingDeviceAction, client: String) -> AuditEvent {
        AuditEvent(client: client, action: .applied(pending.kind), subject: pending.installID, result: .ok,
                   reason: [pending.reason, "ordered by \(pending.client)"].compactMap { $0 }.joined(separator: "; "))
    }
}
