import DeviceCheck
import Storage

extension BitPolicy {
    /// Registers a fresh install: never-set (or stale) devices are stamped with count 0, each later
    /// registration adds one, and reaching `ban_at` bans the device. The count never passes 3.
    public func registerInstall(token: DeviceToken, installID: String?, client: String) async throws(PolicyError) -> InstallOutcome {
        guard case .reinstallCounter(let banAt) = layout else {
            throw .notEnabled("install registration needs the reinstall-counter layout; the layout is \(layout)")
        }
        var meaning = meaning(of: try await query(token))
        var applied: String?
        if let installID, let (after, kind) = try await applyPending(installID: installID, token: token, meaning: meaning, client: client) {
            meaning = after
            applied = kind.rawValue
        }
        if meaning.banned { throw .deviceBanned(appliedPending: applied.flatMap(PendingDeviceAction.Kind.init(rawValue:))) }

        let count: Int
        if meaning.effective == nil { count = 0 } else { count = min((meaning.reinstalls ?? 0) + 1, 3) }
        let bannedNow = count >= banAt
        try await write(token, bits: Bits(counter: count), before: meaning, audit: AuditEvent(
            client: client, action: "install.register", subject: installID,
            result: bannedNow ? "banned" : "ok", reason: bannedNow ? "automatic ban: \(count) reinstalls reached ban_at \(banAt)" : nil))
        return InstallOutcome(reinstalls: count, banned: bannedNow, bannedNow: bannedNow, appliedPending: applied)
    }
}
