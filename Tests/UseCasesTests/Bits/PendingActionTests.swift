import DeviceCheckModel
import Foundation
import Policy
import UseCases
import Sandbox
import Ledger
import SQLiteLedger
import Testing

/// Bans and unbans ordered by install id, applied the next time that install shows a device token.
@Suite("Pending bans and unbans")
struct PendingActionTests {
    static func roles(_ m: YearMonth) -> PolicyConfiguration {
        PolicyConfiguration(layout: .roles(bit0: .promotion, bit1: .ban), promotions: [promotion("spring", m, from: -1, to: nil)])
    }

    static func counter(_ m: YearMonth) -> PolicyConfiguration { PolicyConfiguration(layout: .reinstallCounter(banAt: 3)) }

    /// The order and its audit event are one write: an audit trail that refuses the event keeps no order either
    /// (an order applied later with no trace of who ordered it is what this rules out).
    @Test func anOrderWhoseAuditEventIsRefusedIsNotStored() async throws {
        try await withPolicy(Self.roles) { h in
            try SQLiteConnection(path: h.ledgerPath).execute(
                "CREATE TRIGGER refuse_audit BEFORE INSERT ON audit_events BEGIN SELECT RAISE(ABORT, 'refused by a trigger'); END")
            let refused = await failure { try await h.useCases.orderPending(.ban, installID: "install-1", reason: "chargeback", client: "support") }
            #expect(refused?.description.hasPrefix("storage(") == true, "\(String(describing: refused))")
            await #expect(try h.ledger.pendingActions().isEmpty, "no order without its audit event")
            try SQLiteConnection(path: h.ledgerPath).execute("DROP TRIGGER refuse_audit")
            #expect(try await h.audit().isEmpty)
            _ = try await h.useCases.orderPending(.ban, installID: "install-1", reason: "chargeback", client: "support")
            await #expect(try h.ledger.pendingActions().count == 1)
            #expect(try await h.audit().map(\.action) == ["ban.pending"])
        }
    }

    @Test func aPendingBanIsAppliedByTheNextAdmissionOfThatInstall() async throws {
        try await withPolicy(Self.roles) { h in
            let outcome = try await h.useCases.orderPending(.ban, installID: "install-1", reason: "chargeback", client: "support")
            #expect(outcome.banned && !outcome.applied)
            await #expect(try h.ledger.pendingActions() == [
                PendingDeviceAction(installID: "install-1", kind: .ban, reason: "chargeback", client: "support", createdAt: h.date),
            ])
            #expect(h.totalCalls == 0)

            // Other installs and requests without an install id do not apply it.
            let d = try h.newDevice()
            _ = try await h.useCases.claim("spring", token: d.token, client: "marketing")
            #expect(try await h.useCases.admitMeaning(token: try h.token(d.id), installID: nil, client: "api")?.banned == false)
            #expect(try await h.useCases.admitMeaning(token: try h.token(d.id), installID: "install-2", client: "api")?.banned == false)
            await #expect(try h.ledger.pendingActions().count == 1)
            #expect(try h.query(d.id) == state(1, 0, h.month))

            let token = try h.token(d.id)
            #expect(await failure { try await h.useCases.admitMeaning(token: token, installID: "install-1", client: "api") } == .deviceBanned)
            // Applied to the physical device, promotion bit preserved; the order is gone.
            #expect(try h.query(d.id) == state(1, 1, h.month))
            await #expect(try h.ledger.pendingActions().isEmpty)
            await #expect(try h.ledger.pendingAction(installID: "install-1") == nil)

            let events = try await h.audit()
            #expect(events.map(\.action) == ["ban.applied", "promotion.claim", "ban.pending"])
            try #require(events.count == 3)
            let applied = events[0], pending = events[2]
            #expect(pending.subject == "install-1" && pending.result == .pending && pending.reason == "chargeback")
            #expect(pending.client == "support" && pending.tokenPrefix == nil && pending.transactionID == nil)
            #expect(applied.subject == "install-1" && applied.result == .ok && applied.client == "api")
            #expect(applied.bitsBefore == "(1,0)@\(h.month)" && applied.bitsAfter == "(1,1)@\(h.month)")
            #expect(applied.reason?.contains("chargeback") == true && applied.reason?.contains("ordered by support") == true)
            #expect(applied.transactionID?.isEmpty == false)
            #expect(applied.tokenPrefix == String(ReferenceSHA256.hex(token.base64).prefix(12)))

            // Applied once: the next admission of that install writes nothing.
            let updates = try h.state(d.id).updates
            #expect(await failure { try await h.useCases.admitMeaning(token: try h.token(d.id), installID: "install-1", client: "api") } == .deviceBanned)
            #expect(try h.state(d.id).updates == updates)
        }
    }

    @Test func aPendingUnbanLiftsABanOrderedThroughTheSameInstall() async throws {
        try await withPolicy(Self.roles) { h in
            let d = try h.newDevice()
            h.sandbox.seed(d.id, bits: bits(1, 0), lastUpdated: h.month)
            _ = try await h.useCases.orderPending(.ban, installID: "install-9", reason: "fraud", client: "support")
            #expect(await failure { try await h.useCases.admitMeaning(token: try h.token(d.id), installID: "install-9", client: "api") } == .deviceBanned)
            let outcome = try await h.useCases.orderPending(.unban, installID: "install-9", reason: "appeal", client: "support")
            #expect(!outcome.banned && !outcome.applied)
            await #expect(try h.ledger.pendingActions().map(\.kind) == [.unban])

            let meaning = try await h.useCases.admitMeaning(token: try h.token(d.id), installID: "install-9", client: "api")
            #expect(meaning?.banned == false)
            #expect(try h.query(d.id) == state(1, 0, h.month))
            await #expect(try h.ledger.pendingActions().isEmpty)
            await #expect(try h.audit().map(\.action) == ["unban.applied", "unban.pending", "ban.applied", "ban.pending"])
            await #expect(try h.audit().first?.bitsBefore == "(1,1)@\(h.month)")
        }
    }

    /// An unban by install id must not lift a ban of another kind: any device could present that install id.
    @Test func aPendingUnbanDoesNotLiftABanByTokenOrOnADeviceNotBanned() async throws {
        try await withPolicy(Self.roles) { h in
            let banned = try h.newDevice()
            _ = try await h.useCases.setBanned(true, token: banned.token, reason: "fraud", client: "support")
            _ = try await h.useCases.orderPending(.unban, installID: "install-7", reason: "appeal", client: "support")
            let updates = try h.state(banned.id).updates
            #expect(await failure { try await h.useCases.admitMeaning(token: try h.token(banned.id), installID: "install-7", client: "api") } == .deviceBanned)
            #expect(try h.query(banned.id) == state(0, 1, h.month))
            #expect(try h.state(banned.id).updates == updates)
            await #expect(try h.ledger.pendingActions().map(\.kind) == [.unban])

            // A device that is not banned has nothing to lift either: no write, the order stays.
            let clear = try h.newDevice()
            #expect(try await h.useCases.admitMeaning(token: clear.token, installID: "install-7", client: "api")?.banned == false)
            #expect(try h.state(clear.id).updates == 0)
            await #expect(try h.ledger.pendingActions().map(\.kind) == [.unban])
            await #expect(!(try h.audit().map(\.action).contains("unban.applied")))
        }
    }

    @Test func aLaterOrderForTheSameInstallReplacesTheEarlierOne() async throws {
        try await withPolicy(Self.roles) { h in
            _ = try await h.useCases.orderPending(.ban, installID: "install-1", reason: "first", client: "support")
            _ = try await h.useCases.orderPending(.unban, installID: "install-1", reason: "second", client: "lead")
            let pending = try await h.ledger.pendingActions()
            #expect(pending.count == 1)
            #expect(pending.first?.kind == .unban && pending.first?.reason == "second" && pending.first?.client == "lead")
            let d = try h.newDevice()
            // The unban replaced the ban before it was applied: nothing to lift, nothing written.
            #expect(try await h.useCases.admitMeaning(token: d.token, installID: "install-1", client: "api")?.banned == false)
            #expect(try h.state(d.id).updates == 0)
        }
    }

    @Test func aPendingBanIsAppliedByInstallRegistration() async throws {
        try await withPolicy(Self.counter) { h in
            let d = try h.newDevice()
            _ = try await h.useCases.registerInstall(token: d.token, installID: "install-1", client: "api")
            let outcome = try await h.useCases.orderPending(.ban, installID: "install-2", reason: "abuse", client: "support")
            #expect(outcome.banned && !outcome.applied)
            #expect(await failure { try await h.useCases.registerInstall(token: try h.token(d.id), installID: "install-2", client: "api") } == .deviceBanned)
            #expect(try h.query(d.id) == state(1, 1, h.month))
            await #expect(try h.ledger.pendingActions().isEmpty)
            await #expect(try h.audit().map(\.action) == ["ban.applied", "ban.pending", "install.register"])
        }
    }

    @Test func aPendingUnbanIsAppliedByInstallRegistrationBeforeCounting() async throws {
        try await withPolicy(Self.counter) { h in
            let d = try h.newDevice()
            _ = try await h.useCases.orderPending(.ban, installID: "install-5", reason: "abuse", client: "support")
            #expect(await failure { try await h.useCases.registerInstall(token: d.token, installID: "install-5", client: "api") } == .deviceBanned)
            _ = try await h.useCases.orderPending(.unban, installID: "install-5", reason: nil, client: "support")
            let updatesBefore = try h.state(d.id).updates
            let outcome = try await h.useCases.registerInstall(token: try h.token(d.id), installID: "install-5", client: "api")
            // The unban reset the count to 0; this registration is one more install.
            #expect(outcome.appliedPending == .unban)
            #expect(outcome.reinstalls == 1 && !outcome.banned)
            #expect(try h.query(d.id) == state(1, 0, h.month))
            #expect(try h.state(d.id).updates == updatesBefore + 2)
            let events = try await h.audit()
            #expect(Array(events.map(\.action).prefix(3)) == ["install.register", "unban.applied", "unban.pending"])
            #expect(events[1].bitsBefore == "(1,1)@\(h.month)" && events[1].bitsAfter == "(0,0)@\(h.month)")
            #expect(events[0].bitsBefore == "(0,0)@\(h.month)" && events[0].bitsAfter == "(1,0)@\(h.month)")
        }
    }

    /// Under the reinstall counter an automatic ban (the count reached 3) is not lifted by an install-id unban.
    @Test func aPendingUnbanDoesNotLiftAnAutomaticBan() async throws {
        try await withPolicy(Self.counter) { h in
            let d = try h.newDevice()
            h.sandbox.seed(d.id, bits: bits(1, 1), lastUpdated: h.month)
            _ = try await h.useCases.orderPending(.unban, installID: "install-3", reason: nil, client: "support")
            let updates = try h.state(d.id).updates
            #expect(await failure { try await h.useCases.registerInstall(token: d.token, installID: "install-3", client: "api") } == .deviceBanned)
            #expect(try h.state(d.id).updates == updates)
            await #expect(try h.ledger.pendingActions().map(\.kind) == [.unban])
        }
    }

    /// The fault campaign (counter layout, seed 13): an unban applied through an install id wrote at Apple but its
    /// outcome stayed `unknown`; three reinstalls later the device was banned automatically, and the next unban
    /// pending for that install id lifted the automatic ban, because only `ok` orders counted as applied. An order
    /// that may have been applied counts: the last one through the install id was an unban, so the ban stays.
    @Test func aPendingUnbanDoesNotLiftAnAutomaticBanAfterAnUnbanOfUnknownOutcome() async throws {
        try await withPolicy(clientTimeoutMilliseconds: 300, Self.counter) { h in
            let d = try h.newDevice()
            _ = try await h.useCases.orderPending(.ban, installID: "install-7", reason: "abuse", client: "support")
            #expect(await failure { try await h.useCases.registerInstall(token: d.token, installID: "install-7", client: "api") } == .deviceBanned)
            _ = try await h.useCases.orderPending(.unban, installID: "install-7", reason: nil, client: "support")
            // Every attempt writes, then the connection drops: Apple wrote, the outcome is not known.
            h.sandbox.inject(Fault(kind: .drop, count: 1_000, endpoint: "update_two_bits", apply: true))
            _ = try? await h.useCases.registerInstall(token: try h.token(d.id), installID: "install-7", client: "api")
            h.sandbox.clearFaults()
            #expect(try await h.audit().first { $0.action == "unban.applied" }?.result == .unknown)
            #expect(try h.query(d.id) == state(0, 0, h.month))
            for _ in 0..<3 { _ = try await h.useCases.registerInstall(token: try h.token(d.id), installID: nil, client: "api") }
            #expect(try h.query(d.id) == state(1, 1, h.month), "banned automatically: 3 reinstalls")

            _ = try await h.useCases.orderPending(.unban, installID: "install-7", reason: nil, client: "support")
            let updates = try h.state(d.id).updates
            #expect(await failure { try await h.useCases.registerInstall(token: try h.token(d.id), installID: "install-7", client: "api") } == .deviceBanned)
            #expect(try h.state(d.id).updates == updates, "the automatic ban was lifted")
            await #expect(try h.ledger.pendingActions().map(\.kind) == [.unban])
        }
    }
}
