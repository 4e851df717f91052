import Ledger
public import DeviceCheckModel
public import Policy

/// An admin's look at a device and its ban or unban by device token, written now (`PendingOrderService` orders
/// one by install id).
public struct BanService: Sendable {
    let bits: DeviceBits

    public init(bits: DeviceBits) {
        self.bits = bits
    }

    public var layout: BitLayout { bits.layout }

    /// Bans or unbans the physical device behind `token` now.
    public func setBanned(_ banned: Bool, token: DeviceToken, reason: String?, client: String) async throws(PolicyError) -> BanOutcome {
        let rules = bits.rules
        try rules.requireBanMeaning()
        let meaning = bits.meaning(of: try await bits.queryBeforeWrite(token))
        try await bits.write(token, bits: rules.bits(banned: banned, from: meaning, in: bits.currentMonth), before: meaning, audit: AuditEvent(
            client: client, action: banned ? .ban : .unban, result: .ok, reason: reason))
        return BanOutcome(banned: banned, applied: true)
    }

    /// The raw state and its meaning, for admins. Under the `none` layout bits are never read.
    public func inspect(token: DeviceToken) async throws(PolicyError) -> DeviceMeaning {
        try bits.rules.requireBitsRead()
        return bits.meaning(of: try await bits.query(token))
    }
}
