public import DeviceCheckModel
import FoundationEssentials
public import Ledger

extension BitPolicy {
    func requireBanMeaning() throws(PolicyError) {
        guard layout.hasBanMeaning else { throw .notEnabled("bans need a ban bit or the reinstall counter; the layout is \(layout)") }
    }

    /// The bits that mean banned (or not) under the layout, starting from `base`.
    func bits(_ base: Bits, banned: Bool) -> Bits {
        switch layout {
        case .reinstallCounter: return Bits(counter: banned ? 3 : 0)
        case .roles:
            var bits = base
            if let b = layout.banBit { bits[b] = banned }
            return bits
        case .none: return base
        }
    }

    /// Bans or unbans the physical device behind `token` now.
    public func setBanned(_ banned: Bool, token: DeviceToken, reason: String?, client: String) async throws(PolicyError) -> BanOutcome {
        try requireBanMeaning()
        let meaning = meaning(of: try await queryBeforeWrite(token))
        try await write(token, bits: bits(baseBits(for: meaning), banned: banned), before: meaning, audit: AuditEvent(
            client: client, action: banned ? .ban : .unban, result: .ok, reason: reason))
        return BanOutcome(banned: banned, applied: true)
    }

    /// Orders a ban or unban for an install id, applied when that install next shows a device token.
    public func orderPending(_ kind: PendingDeviceAction.Kind, installID: String, reason: String?, client: String) async throws(PolicyError) -> BanOutcome {
        try requireBanMeaning()
        do {
            try await ledger.setPendingAction(PendingDeviceAction(installID: installID, kind: kind, reason: reason, client: client, createdAt: now()))
        } catch { throw .storage(error) }
        try await record(AuditEvent(at: now(), client: client, action: .pending(kind), subject: installID, result: .pending, reason: reason))
        return BanOutcome(banned: kind == .ban, applied: false)
    }

    /// Applies a pending order for `installID` to the device's bits, audits it, and removes it.
    /// Returns the device's meaning after the write and what was applied; nil when nothing was pending.
    public func applyPending(installID: String, token: DeviceToken, meaning: DeviceMeaning, client: String) async throws(PolicyError) -> (DeviceMeaning, PendingDeviceAction.Kind)? {
        guard layout.hasBanMeaning else { return nil }
        // Taken, not just read: installs of one device arriving at once (on one process or several replicas)
        // apply the order once; the others go on as if nothing were pending.
        let pending: PendingDeviceAction?
        do { pending = try await ledger.claimPendingAction(installID: installID) } catch { throw .storage(error) }
        guard let pending else { return nil }
        let newBits: Bits
        do throws(PolicyError) {
            guard try await mayApply(pending, to: meaning) else {
                try? await ledger.releasePendingAction(installID: installID)
                return nil
            }
            newBits = bits(baseBits(for: meaning), banned: pending.kind == .ban)
            try await write(token, bits: newBits, before: meaning, audit: AuditEvent(
                client: client, action: .applied(pending.kind), subject: installID, result: .ok,
                reason: [pending.reason, "ordered by \(pending.client)"].compactMap { $0 }.joined(separator: "; ")))
        } catch {
            // Given back for the next install (a write that did land is harmlessly repeated then).
            try? await ledger.releasePendingAction(installID: installID)
            throw error
        }
        do { try await ledger.completePendingAction(installID: installID) } catch { throw .storage(error) }
        let after = self.meaning(of: .state(BitState(bits: newBits, lastUpdated: currentMonth)))
        return (after, pending.kind)
    }

    /// Validates the token and, when the layout can say so, refuses banned devices, after applying any
    /// pending order for `installID`. One Apple call when nothing is pending: a query when the layout
    /// has a ban meaning (it validates too), a validate otherwise.
    public func admit(token: DeviceToken, installID: String?, client: String) async throws(PolicyError) -> Admission {
        guard layout.hasBanMeaning else {
            try await validate(token)
            return Admission(meaning: nil, appliedPending: nil)
        }
        var meaning = meaning(of: try await queryBeforeWrite(token))
        var applied: PendingDeviceAction.Kind?
        if let installID, let (after, kind) = try await applyPending(installID: installID, token: token, meaning: meaning, client: client) {
            meaning = after
            applied = kind
        }
        if meaning.banned { throw .deviceBanned(appliedPending: applied) }
        return Admission(meaning: meaning, appliedPending: applied)
    }

    /// The raw state and its meaning, for admins. Under the `none` layout bits are never read.
    public func inspect(token: DeviceToken) async throws(PolicyError) -> DeviceMeaning {
        if case .none = layout { throw .notEnabled("the layout \(layout) never reads the bits") }
        return meaning(of: try await query(token))
    }
}
