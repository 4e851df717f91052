import Foundation
import Ledger
@testable import PostgresLedger
import SQLiteLedger
import Testing

/// Issue 33 (5): withdrawing a pending order is one store operation whose audit event is written in the same
/// transaction, so two processes racing withdraw it once, and a crash or refusal leaves no unaudited withdrawal.
@Suite("Ledger contract: withdrawing a pending order")
struct PendingWithdrawalContractTests {
    static let audit: @Sendable (PendingDeviceAction) -> AuditEvent = { order in
        AuditEvent(at: .ms(5_000), client: "ops", action: .pendingCancelled, subject: order.installID, result: .ok,
                   reason: "\(order.kind.rawValue) ordered by \(order.client) withdrawn")
    }
    let ban = PendingDeviceAction(installID: "a", kind: .ban, reason: "fraud", client: "admin", createdAt: .ms(1_000))

    @Test(arguments: Backend.all)
    func aRacedWithdrawalHappensOnceWithOneAuditEvent(_ backend: Backend) async throws {
        try await withStore(backend) { store in
            let ledger = try store.open(), other = try store.open()
            #expect(try await ledger.withdrawPendingAction(installID: "a", audit: Self.audit) == nil, "nothing pending")
            #expect(try await ledger.auditEvents(limit: 10, before: nil).isEmpty, "nothing written for no order")

            try await ledger.order(ban)
            try await ledger.order(PendingDeviceAction(installID: "b", kind: .unban, reason: nil, client: "admin", createdAt: .ms(2_000)))
            async let first = ledger.withdrawPendingAction(installID: "a", audit: Self.audit)
            async let second = other.withdrawPendingAction(installID: "a", audit: Self.audit)
            let withdrawn = try await [first, second]
            #expect(withdrawn.compactMap { $0 } == [ban], "exactly one of two processes withdraws it")
            #expect(try await ledger.pendingActions().map(\.installID) == ["b"], "only that order is gone")

            let events = try await ledger.auditEvents(limit: 10, before: nil)
            #expect(events.count == 3, "the two orders' events and one withdrawal's")
            #expect(events.first?.action == "pending.cancel")
            #expect(events.first?.subject == "a")
            #expect(events.first?.client == "ops")
            #expect(events.first?.reason == "ban ordered by admin withdrawn", "the event is made from the order withdrawn")
            #expect(try await ledger.withdrawPendingAction(installID: "a", audit: Self.audit) == nil, "gone: nothing to withdraw again")
            #expect(try await ledger.auditEvents(limit: 10, before: nil).count == 3)
        }
    }

    @Test(arguments: Backend.all)
    func aRefusedAuditEventKeepsTheOrder(_ backend: Backend) async throws {
        try await withStore(backend) { store in
            let ledger = try store.open()
            try await ledger.order(ban)
            try Self.refuseAuditEvents(in: store)
            await #expect(throws: StorageError.self) { try await ledger.withdrawPendingAction(installID: "a", audit: Self.audit) }
            #expect(try await ledger.pendingAction(installID: "a") == ban, "not withdrawn without its audit event")
        }
    }

    /// A trigger refusing every new audit event (what the ledger API cannot do).
    static func refuseAuditEvents(in store: LedgerStore) throws {
        if let sqlite = store as? SQLiteStore {
            try SQLiteConnection(path: sqlite.path).execute("""
                CREATE TRIGGER refuse_audit BEFORE INSERT ON audit_events BEGIN SELECT RAISE(ABORT, 'refused by a trigger'); END
                """)
        } else if let postgres = store as? PostgresStore {
            _ = try postgres.connection().execute("""
                CREATE FUNCTION refuse_audit() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused by a trigger'; END $$;
                CREATE TRIGGER refuse_audit BEFORE INSERT ON audit_events FOR EACH ROW EXECUTE FUNCTION refuse_audit();
                """)
        }
    }
}
