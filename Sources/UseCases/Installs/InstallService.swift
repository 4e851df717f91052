public import DeviceCheckModel
import Ledger
public import Policy

/// `POST /v1/installs`: the reinstall counter, one registration per fresh install.
public struct InstallService: Sendable {
    let bits: DeviceBits
    let admission: DeviceAdmission

    public init(bits: DeviceBits, admission: DeviceAdmission) {
        self.bits = bits
        self.admission = admission
    }

    /// Registers a fresh install (`BitRules.install(on:banAt:)`), after the device's admission (pending orders
    /// for `installID` applied first; a banned device refused).
    public func registerInstall(token: DeviceToken, installID: String?, client: String) async throws(PolicyError) -> InstallOutcome {
        let banAt = try bits.rules.reinstallCounterBanAt()
        // The counter layout has a ban meaning, so admission is a query with pending orders applied.
        let admitted = try await admission.admit(token: token, installID: installID, client: client)
        guard let meaning = admitted.meaning else { throw .notEnabled("the layout \(bits.layout) never reads the bits") }
        let decision = BitRules.install(on: meaning, banAt: banAt)
        try await bits.write(token, bits: decision.bits, before: meaning, audit: AuditEvent(
            client: client, action: .installRegister, subject: installID, result: decision.result, reason: decision.reason))
        return InstallOutcome(reinstalls: decision.reinstalls, banned: decision.banned, appliedPending: admitted.appliedPending)
    }
}
