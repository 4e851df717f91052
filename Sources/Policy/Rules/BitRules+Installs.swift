import DeviceCheckModel
import Ledger

extension BitRules {
    /// The reinstall counter's `ban_at`; refuses every other layout (before anything is read).
    public func reinstallCounterBanAt() throws(PolicyError) -> Int {
        guard case .reinstallCounter(let banAt) = layout else {
            throw .notEnabled("install registration needs the reinstall-counter layout; the layout is \(layout)")
        }
        return banAt
    }

    /// A fresh install of a device in `meaning`: never-set (or stale) devices are stamped with count 0, each later
    /// registration adds one, and reaching `banAt` bans the device. The count never passes 3.
    public static func install(on meaning: DeviceMeaning, banAt: Int) -> InstallDecision {
        let count: Int
        if meaning.effective == nil { count = 0 } else { count = min((meaning.reinstalls ?? 0) + 1, 3) }
        let banned = count >= banAt
        return InstallDecision(reinstalls: count, banned: banned, result: banned ? .banned : .ok,
                               reason: banned ? "automatic ban: \(count) reinstalls reached ban_at \(banAt)" : nil)
    }
}
