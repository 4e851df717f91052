public import DeviceCheckModel
import Ledger

extension BitPolicy {
    /// Registers a fresh install: never-set (or stale) devices are stamped with count 0, each later
    /// registration adds one, and reaching `ban_at` bans the device. The count never passes 3.
    public func registerInstall(token: DeviceToken, installID: String?, client: String) async throws(PolicyError) -> InstallOutcome {
        guard case .reinstallCounter(let banAt) = layout else {
            throw .notEnabled("install registration needs the reinstall-counter layout; the layout is \(layout)")
        }
        // The counter layout has a ban meaning, so admission is a query with pending orders applied.
        let admission = try await admit(token: token, installID: installID, client: client)
        guard let meaning = admission.meaning else { throw .notEnabled("the layout \(layout) never reads the bits") }

        let count: Int
        if meaning.effective == nil { count = 0 } else { count = min((meaning.reinstalls ?? 0) + 1, 3) }
        let banned = count >= banAt
        try await write(token, bits: Bits(counter: count), before: meaning, audit: AuditEvent(
            client: client, action: .installRegister, subject: installID,
            result: banned ? .banned : .ok, reason: banned ? "automatic ban: \(count) reinstalls reached ban_at \(banAt)" : nil))
        return InstallOutcome(reinstalls: count, banned: banned, appliedPending: admission.appliedPending)
    }
}
