import Foundation
import Ledger
import Testing

/// The writes that come with their audit event: an order by install id (`orderPendingAction`) and a key's
/// revocation (`revokeAppAttestKey(…audit:)`) are one transaction each, so neither step is kept without the other.
@Suite("Ledger contract: a write and its audit event in one transaction")
struct AuditedWriteContractTests {
    let now = Date.ms(1_800_000_000_000)
    let ban = PendingDeviceAction(installID: "a", kind: .ban, reason: "fraud", client: "admin", createdAt: .ms(1_000))


    @Test(arguments: Backend.all)
    func anOrderIsStoredWithItsAuditEvent(_ backend: Backend) async throws {
        try await withStore(backend) { store in
            let ledger = try store.open()
            try await ledger.orderPendingAction(ban, audit: .ordered(ban))
            #expect(try await ledger.pendingAction(installID: "a") == ban)
            let events = try await ledger.auditEvents(limit: 10, before: nil)
            #expect(events.map(\.action) == ["ban.pending"])
            #expect(events.first?.subject == "a")
            #expect(events.first?.result == .pending)
            let unban = PendingDeviceAction(installID: "a", kind: .unban, reason: nil, client: "ops", createdAt: .ms(2_000))
            try await ledger.orderPendingAction(unban, audit: .ordered(unban))
            #expect(try await ledger.pendingAction(installID: "a") == unban, "a later order replaces the earlier one")
            #expect(try await ledger.auditEvents(limit: 10, before: nil).map(\.action) == ["unban.pending", "ban.pending"])
        }
    }

    @Test(arguments: Backend.all)
    func aRefusedAuditEventStoresNoOrderAndKeepsTheEarlierOne(_ backend: Backend) async throws {
        try await withStore(backend) { store in
            let ledger = try store.open()
            let earlier = PendingDeviceAction(installID: "b", kind: .ban, reason: nil, client: "admin", createdAt: .ms(500))
            try await ledger.orderPendingAction(earlier, audit: .ordered(earlier))
            try PendingWithdrawalContractTests.refuseAuditEvents(in: store)
            await #expect(throws: StorageError.self) { try await ledger.orderPendingAction(ban, audit: .ordered(ban)) }
            #expect(try await ledger.pendingAction(installID: "a") == nil, "no order without its audit event")
            let unban = PendingDeviceAction(installID: "b", kind: .unban, reason: nil, client: "ops", createdAt: .ms(2_000))
            await #expect(throws: StorageError.self) { try await ledger.orderPendingAction(unban, audit: .ordered(unban)) }
            #expect(try await ledger.pendingAction(installID: "b") == earlier, "the order it would have replaced stays")
            #expect(try await ledger.auditEvents(limit: 10, before: nil).count == 1)
        }
    }

    @Test(arguments: Backend.all)
    func aRevocationIsStoredWithItsAuditEventAndNothingForAnUnknownKey(_ backend: Backend) async throws {
        try await withStore(backend) { store in
            let ledger = try store.open()
            #expect(try await ledger.storeAppAttestKey(AppAttestContractTests.key("k")))
            #expect(try await ledger.revokeAppAttestKey(keyID: "nobody", reason: "x", now: now, audit: .revoked(keyID: "nobody", reason: "stolen phone", at: now)) == false)
            #expect(try await ledger.auditEvents(limit: 10, before: nil).isEmpty, "nothing audited for no key")
            #expect(try await ledger.revokeAppAttestKey(keyID: "k", reason: "stolen phone", now: now, audit: .revoked(keyID: "k", reason: "stolen phone", at: now)))
            #expect(try await ledger.appAttestKey(id: "k")?.revokedAt == now)
            let events = try await ledger.auditEvents(limit: 10, before: nil)
            #expect(events.map(\.action) == ["app_attest.revoke"])
            #expect(events.first?.subject == "k")
        }
    }

    @Test(arguments: Backend.all)
    func aRefusedAuditEventLeavesTheKeyUnrevoked(_ backend: Backend) async throws {
        try await withStore(backend) { store in
            let ledger = try store.open()
            #expect(try await ledger.storeAppAttestKey(AppAttestContractTests.key("k")))
            try PendingWithdrawalContractTests.refuseAuditEvents(in: store)
            await #expect(throws: StorageError.self) {
                try await ledger.revokeAppAttestKey(keyID: "k", reason: "stolen phone", now: now, audit: .revoked(keyID: "k", reason: "stolen phone", at: now))
            }
            let key = try await ledger.appAttestKey(id: "k")
            #expect(key?.revokedAt == nil, "no revocation without its audit event")
            #expect(key?.revokedReason == nil)
            #expect(try await ledger.advanceAppAttestCounter(keyID: "k", to: 1) == .advanced, "the key still asserts")
        }
    }
}
