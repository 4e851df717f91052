import DeviceCheckModel
import Ledger
@testable import Policy
import Testing

/// The bits of a ban or unban, and which pending order applies.
@Suite struct BanRulesTests {
    @Test func aBanSetsTheBanBitAndAnUnbanClearsItKeepingThePromotionBit() {
        let rules = roles()
        #expect(rules.bits(bits(1, 0), banned: true) == bits(1, 1))
        #expect(rules.bits(bits(1, 1), banned: false) == bits(1, 0))
        #expect(counter(banAt: 2).bits(bits(1, 0), banned: true) == Bits(counter: 3), "the counter bans at 3")
        #expect(counter(banAt: 2).bits(bits(1, 1), banned: false) == Bits(counter: 0))
    }

    @Test func layoutsWithoutABanMeaningRefuseBans() {
        let none = BitRules(configuration: PolicyConfiguration(layout: .none))
        #expect(refusal { try none.requireBanMeaning() } != nil)
        #expect(refusal { try none.requireBitsRead() } != nil)
        let promotionsOnly = BitRules(configuration: PolicyConfiguration(layout: .roles(bit0: .promotion, bit1: .unused)))
        #expect(refusal { try promotionsOnly.requireBanMeaning() } != nil)
        #expect(refusal { try roles().requireBanMeaning() } == nil)
        #expect(refusal { try counter(banAt: 3).requireBanMeaning() } == nil)
    }

    static let ban = PendingDeviceAction(installID: "i", kind: .ban, reason: "fraud", client: "admin", createdAt: .init(timeIntervalSince1970: 0))
    static let unban = PendingDeviceAction(installID: "i", kind: .unban, reason: nil, client: "admin", createdAt: .init(timeIntervalSince1970: 0))

    @Test func aPendingBanAlwaysAppliesAndWritesTheBan() {
        let rules = roles()
        let meaning = rules.meaning(of: state(1, 0), in: now)
        #expect(!rules.needsOrderHistory(Self.ban, on: meaning))
        #expect(rules.decide(Self.ban, on: meaning, in: now, lastApplied: nil) == .apply(bits(1, 1)))
    }

    @Test func aPendingUnbanLiftsOnlyABanAppliedThroughItsInstallID() {
        let rules = roles()
        let banned = rules.meaning(of: state(0, 1), in: now)
        #expect(rules.needsOrderHistory(Self.unban, on: banned))
        #expect(rules.decide(Self.unban, on: banned, in: now, lastApplied: .ban) == .apply(bits(0, 0)))
        #expect(rules.decide(Self.unban, on: banned, in: now, lastApplied: nil) == .keep, "banned otherwise (by token, or a ban of unknown outcome)")
        #expect(rules.decide(Self.unban, on: banned, in: now, lastApplied: .unban) == .keep)
        let free = rules.meaning(of: state(0, 0), in: now)
        #expect(!rules.needsOrderHistory(Self.unban, on: free))
        #expect(rules.decide(Self.unban, on: free, in: now, lastApplied: .ban) == .keep, "nothing to lift")
    }

    static func event(_ action: AuditAction, _ result: AuditResult, subject: String = "i") -> AuditEvent {
        AuditEvent(client: "api", action: action, subject: subject, result: result)
    }

    @Test func theNewestOrderAppliedThroughAnInstallIDCountsWhenItMayHaveLanded() {
        func scan(_ page: [AuditEvent]) -> OrderHistoryScan { BitRules.lastAppliedOrder(installID: "i", in: page) }
        #expect(scan([Self.event(.banApplied, .ok)]) == .found(.ban))
        #expect(scan([Self.event(.unbanApplied, .unknown), Self.event(.banApplied, .ok)]) == .found(.unban),
                "an unban of unknown outcome may have lifted the ban")
        #expect(scan([Self.event(.unbanApplied, .pending), Self.event(.banApplied, .ok)]) == .found(.unban))
        #expect(scan([Self.event(.banApplied, .unknown)]) == .found(nil), "a ban of unknown outcome is not known to be the device's")
        #expect(scan([Self.event(.banApplied, .failed), Self.event(.unbanApplied, .ok)]) == .found(.unban), "a failed write never landed")
        #expect(scan([Self.event(.banApplied, .ok, subject: "other"), Self.event(.ban, .ok)]) == .notInPage)
    }

    @Test func applyingAnOrderIsAuditedWithWhoOrderedIt() {
        let event = BitRules.appliedEvent(Self.ban, client: "api")
        #expect(event.action == "ban.applied")
        #expect(event.subject == "i")
        #expect(event.reason == "fraud; ordered by admin")
        #expect(BitRules.appliedEvent(Self.unban, client: "api").reason == "ordered by admin")
    }
}
