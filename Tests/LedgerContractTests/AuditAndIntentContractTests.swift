import DeviceDomain
import Foundation
import Ledger
import Testing

/// The audit trail and the write intents around every Apple write, the same cases on every backend.
@Suite("Ledger contract: audit and write intents")
struct AuditAndIntentContractTests {
    static func intent(_ id: String, prefix: String = "abcd1234", at: Date = .ms(1_700_000_000_123)) -> WriteIntent {
        WriteIntent(id: id, tokenPrefix: prefix, bits: Bits(bit0: true, bit1: false), month: YearMonth(year: 2026, month: 11)!, successResult: .ok,
                    event: AuditEvent(at: at, client: "marketing", action: .promotionClaim, subject: "spring", bitsBefore: "never-set",
                                      bitsAfter: "(1,0)@2026-11", result: .pending, tokenPrefix: prefix))
    }

    @Test(arguments: Backend.all)
    func eventsRoundTripAndPageNewestFirst(_ backend: Backend) async throws {
        try await withStore(backend) { store in
            let ledger = try store.open()
            #expect(try await ledger.auditEvents(limit: 10, before: nil).isEmpty)
            let full = AuditEvent(at: .ms(1_700_000_000_456), client: "admin", action: .ban, subject: "install-x", bitsBefore: "(0,0)@2026-10",
                                  bitsAfter: "(0,1)@2026-11", result: .banned, reason: "fraud", transactionID: "tx-1", tokenPrefix: "ffee",
                                  intentID: nil)
            var ids: [Int64] = []
            for i in 0..<6 { ids.append(try await ledger.record(AuditEvent(at: .ms(1_000 + Int64(i)), client: "c", action: "custom.\(i)", result: .ok))) }
            ids.append(try await ledger.record(full))
            #expect(ids == ids.sorted() && Set(ids).count == 7, "ids grow: \(ids)")

            let all = try await ledger.auditEvents(limit: 100, before: nil)
            #expect(all.map(\.id) == ids.reversed())
            var expected = full
            expected.id = ids[6]
            #expect(all.first == expected, "every field, times to the millisecond")
            #expect(all.last?.action == "custom.0", "an action this build does not know is kept as recorded")

            var paged: [AuditEvent] = []
            var cursor: Int64?
            while true {
                let page = try await ledger.auditEvents(limit: 3, before: cursor)
                if page.isEmpty { break }
                #expect(page.count <= 3)
                paged += page
                cursor = page.last?.id
            }
            #expect(paged == all)
            #expect(try await ledger.auditEvents(limit: 2, before: all[1].id) == Array(all[2...3]))
            #expect(try await ledger.auditEvents(limit: 0, before: nil).count == 1, "a limit below 1 reads one")
        }
    }

    @Test(arguments: Backend.all)
    func filtersNarrowTheTrailInTheQuery(_ backend: Backend) async throws {
        try await withStore(backend) { store in
            let ledger = try store.open()
            try await ledger.record(AuditEvent(at: .ms(1_000), client: "ops", action: "ban", result: .ok, tokenPrefix: "aaaa11112222"))
            try await ledger.record(AuditEvent(at: .ms(2_000), client: "ops", action: "ban.pending", subject: "install-1", result: .pending))
            try await ledger.record(AuditEvent(at: .ms(3_000), client: "main", action: "install.register", subject: "install-1", result: .ok,
                                               tokenPrefix: "bbbb11112222"))
            try await ledger.record(AuditEvent(at: .ms(4_000), client: "ops", action: "unban", result: .failed, tokenPrefix: "aaaa11112222"))
            func actions(_ filter: AuditFilter, limit: Int = 100) async throws -> [String] {
                try await ledger.auditEvents(limit: limit, before: nil, filter: filter).map(\.action)
            }
            #expect(try await actions(AuditFilter()) == ["unban", "install.register", "ban.pending", "ban"])
            let newest = try #require(try await ledger.auditEvents(limit: 1, before: nil).first)
            #expect(try await ledger.auditEvent(id: newest.id) == newest)
            #expect(try await ledger.auditEvent(id: newest.id + 100) == nil)
            #expect(try await actions(AuditFilter(tokenPrefix: "aaaa11112222")) == ["unban", "ban"])
            #expect(try await actions(AuditFilter(installID: "install-1")) == ["install.register", "ban.pending"])
            #expect(try await actions(AuditFilter(client: "main")) == ["install.register"])
            #expect(try await actions(AuditFilter(result: .failed)) == ["unban"])
            #expect(try await actions(AuditFilter(action: "ban")) == ["ban"])
            #expect(try await actions(AuditFilter(since: .ms(2_000), until: .ms(4_000))) == ["install.register", "ban.pending"])
            #expect(try await actions(AuditFilter(client: "ops", tokenPrefix: "aaaa11112222"), limit: 1) == ["unban"], "the limit counts matches only")
        }
    }

    @Test(arguments: Backend.all)
    func anIntentIsPendingThenUnknownThenSettled(_ backend: Backend) async throws {
        try await withStore(backend) { store in
            let ledger = try store.open()
            try await ledger.recordWriteIntent(Self.intent("i-1"))
            var events = try await ledger.auditEvents(limit: 10, before: nil)
            #expect(events.count == 1)
            #expect(events.first?.result == .pending)
            #expect(events.first?.intentID == "i-1")
            #expect(try await ledger.unknownWriteIntents(tokenPrefix: "abcd1234", limit: 10).isEmpty, "pending is not unknown")

            try await ledger.resolveWriteIntent(id: "i-1", result: .unknown, bitsAfter: nil, reason: "timeout", transactionID: nil)
            let unknown = try await ledger.unknownWriteIntents(tokenPrefix: "abcd1234", limit: 10)
            #expect(unknown.count == 1)
            #expect(unknown.first?.id == "i-1")
            #expect(unknown.first?.bits.description == "(1,0)")
            #expect(unknown.first?.month.description == "2026-11")
            #expect(unknown.first?.successResult == .ok)
            #expect(unknown.first?.tokenPrefix == "abcd1234")
            #expect(unknown.first?.event.result == .unknown)
            #expect(unknown.first?.event.reason == "timeout")
            #expect(unknown.first?.event.at == .ms(1_700_000_000_123))
            #expect(try await ledger.unknownWriteIntents(tokenPrefix: "other", limit: 10).isEmpty)

            try await ledger.resolveWriteIntent(id: "i-1", result: .ok, bitsAfter: "(1,0)@2026-11", reason: nil, transactionID: "tx-9")
            #expect(try await ledger.unknownWriteIntents(tokenPrefix: "abcd1234", limit: 10).isEmpty)
            events = try await ledger.auditEvents(limit: 10, before: nil)
            #expect(events.first?.result == .ok)
            #expect(events.first?.transactionID == "tx-9")
            #expect(events.first?.reason == nil)

            // Settled is final: a later resolution changes nothing.
            try await ledger.resolveWriteIntent(id: "i-1", result: .failed, bitsAfter: nil, reason: "late", transactionID: nil)
            #expect(try await ledger.auditEvents(limit: 10, before: nil).first?.result == .ok)
            // Unknown intents come oldest first, up to the limit.
            for i in 2...4 {
                try await ledger.recordWriteIntent(Self.intent("i-\(i)"))
                try await ledger.resolveWriteIntent(id: "i-\(i)", result: .unknown, bitsAfter: nil, reason: nil, transactionID: nil)
            }
            #expect(try await ledger.unknownWriteIntents(tokenPrefix: "abcd1234", limit: 2).map(\.id) == ["i-2", "i-3"])
            #expect(try await ledger.unknownWriteIntents(tokenPrefix: "abcd1234", limit: 0).map(\.id) == ["i-2"])
            // An intent id is recorded once.
            await #expect(throws: StorageError.self) { try await ledger.recordWriteIntent(Self.intent("i-2")) }
            #expect(try await ledger.auditEvents(limit: 100, before: nil).count == 4, "nothing half-written")
        }
    }

    @Test(arguments: Backend.all)
    func pendingIntentsOfAStoppedLedgerAreMarkedUnknownAtTheNextStart(_ backend: Backend) async throws {
        try await withStore(backend) { store in
            let first = try store.open()
            try await first.recordWriteIntent(Self.intent("left-pending"))
            var withReason = Self.intent("with-reason")
            withReason.event.reason = "slow"
            try await first.recordWriteIntent(withReason)
            try await first.recordWriteIntent(Self.intent("settled"))
            try await first.resolveWriteIntent(id: "settled", result: .failed, bitsAfter: nil, reason: "apple 500", transactionID: nil)
            try await first.record(AuditEvent(client: "c", action: .ban, result: .pending))   // not a write intent
            store.stop(first)

            let second = try store.open()
            #expect(try await second.markInterruptedWriteIntents(reason: "interrupted by a restart") == 2)
            let events = try await second.auditEvents(limit: 10, before: nil)
            let byIntent = Dictionary(uniqueKeysWithValues: events.compactMap { e in e.intentID.map { ($0, e) } })
            #expect(byIntent["left-pending"]?.result == .unknown)
            #expect(byIntent["left-pending"]?.reason == "interrupted by a restart")
            #expect(byIntent["with-reason"]?.reason == "slow; interrupted by a restart")
            #expect(byIntent["settled"]?.result == .failed)
            #expect(events.first { $0.intentID == nil }?.result == .pending)
            #expect(try await second.unknownWriteIntents(tokenPrefix: "abcd1234", limit: 10).map(\.id) == ["left-pending", "with-reason"])
            #expect(try await second.markInterruptedWriteIntents(reason: "again") == 0)
        }
    }

    @Test(arguments: Backend.all)
    func healthIsGoodOnAFreshLedger(_ backend: Backend) async throws {
        try await withStore(backend) { store in
            let ledger = try store.open()
            try await ledger.checkHealth()
            try await ledger.checkHealth()   // the cached verdict
        }
    }
}
