public import DeviceCheckModel
public import Ledger
public import Policy

/// The check every client-facing route makes of a device token: valid at Apple, and, when the layout can say
/// so, not banned, after applying any pending ban or unban ordered for the request's install id.
public struct DeviceAdmission: Sendable {
    let bits: DeviceBits
    /// The pending orders taken and applied here, and the audit trail their unbans are judged by.
    let ledger: any PendingOrderStore & AuditLog

    public init(bits: DeviceBits, ledger: any PendingOrderStore & AuditLog) {
        self.bits = bits
        self.ledger = ledger
    }

    /// Validates the token and, when the layout can say so, refuses banned devices, after applying any
    /// pending order for `installID`. One Apple call when nothing is pending: a query when the layout
    /// has a ban meaning (it validates too), a validate otherwise.
    public func admit(token: DeviceToken, installID: String?, client: String) async throws(PolicyError) -> Admission {
        guard bits.layout.hasBanMeaning else {
            try await bits.validate(token)
            return Admission(meaning: nil, appliedPending: nil)
        }
        var meaning = bits.meaning(of: try await bits.queryBeforeWrite(token))
        var applied: PendingDeviceAction.Kind?
        if let installID, let (after, kind) = try await applyPending(installID: installID, token: token, meaning: meaning, client: client) {
            meaning = after
            applied = kind
        }
        if meaning.banned { throw .deviceBanned(appliedPending: applied) }
        return Admission(meaning: meaning, appliedPending: applied)
    }

    /// `POST /v1/devices/validate`: whether Apple knows the token (false for a token Apple calls invalid), a
    /// banned device refused as on every client-facing route.
    public func validate(token: DeviceToken, client: String) async throws(PolicyError) -> Bool {
        do throws(PolicyError) {
            _ = try await admit(token: token, installID: nil, client: client)
            return true
        } catch .apple(.invalidDeviceToken) {
            return false
        }
    }

    /// Applies a pending order for `installID` to the device's bits, audits it, and removes it.
    /// Returns the device's meaning after the write and what was applied; nil when nothing was pending.
    func applyPending(installID: String, token: DeviceToken, meaning: DeviceMeaning, client: String) async throws(PolicyError) -> (DeviceMeaning, PendingDeviceAction.Kind)? {
        let rules = bits.rules
        guard rules.layout.hasBanMeaning else { return nil }
        // Taken, not just read: installs of one device arriving at once (on one process or several replicas)
        // apply the order once; the others go on as if nothing were pending.
        let pending: PendingDeviceAction?
        do { pending = try await ledger.claimPendingAction(installID: installID) } catch { throw .storage(error) }
        guard let pending else { return nil }
        let month = bits.currentMonth
        let newBits: Bits
        do throws(PolicyError) {
            let lastApplied = rules.needsOrderHistory(pending, on: meaning) ? try await lastAppliedOrder(installID: pending.installID) : nil
            guard case .apply(let decided) = rules.decide(pending, on: meaning, in: month, lastApplied: lastApplied) else {
                try? await ledger.releasePendingAction(installID: installID)
                return nil
            }
            newBits = decided
            try await bits.write(token, bits: newBits, before: meaning, audit: BitRules.appliedEvent(pending, client: client))
        } catch {
            // Given back for the next install (a write that did land is harmlessly repeated then).
            try? await ledger.releasePendingAction(installID: installID)
            throw error
        }
        do { try await ledger.completePendingAction(installID: installID) } catch { throw .storage(error) }
        return (rules.meaning(afterWriting: newBits, in: month), pending.kind)
    }

    /// The kind of the newest order applied to a device through `installID`, from the audit trail (newest first,
    /// a page at a time: this runs only while an unban is pending for the install; `BitRules.lastAppliedOrder`).
    func lastAppliedOrder(installID: String) async throws(PolicyError) -> PendingDeviceAction.Kind? {
        var before: Int64?
        while true {
            let page: [AuditEvent]
            do { page = try await ledger.auditEvents(limit: 1_000, before: before) } catch { throw .storage(error) }
            if case .found(let kind) = BitRules.lastAppliedOrder(installID: installID, in: page) { return kind }
            guard page.count == 1_000, let last = page.last else { return nil }
            before = last.id
        }
    }
}
