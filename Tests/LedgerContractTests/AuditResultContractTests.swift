import Foundation
import Ledger
@testable import PostgresLedger
import SQLiteLedger
import Testing

/// Audit results are typed (`AuditResult`) but stored, filtered and shown as the text they always were; a
/// stored text this build does not record (another version's) is kept readable, not refused.
@Suite("Ledger contract: audit results")
struct AuditResultContractTests {
    /// The stored text of every result, written out: what the ledgers hold and the API shows, unchanged.
    static let storedText: [(AuditResult, String)] = [(.ok, "ok"), (.banned, "banned"), (.pending, "pending"), (.failed, "failed"),
                                                      (.unknown, "unknown")]

    /// The case itself, by pattern (`==` compares stored text, so it cannot tell `.unrecognized("ok")` from `.ok`).
    static func caseName(_ result: AuditResult) -> String {
        switch result {
        case .ok: "ok"
        case .banned: "banned"
        case .pending: "pending"
        case .failed: "failed"
        case .unknown: "unknown"
        case .unrecognized(let text): "unrecognized(\(text))"
        }
    }

    @Test func everyResultRoundTripsThroughItsStoredText() throws {
        #expect(Self.storedText.map(\.0) == AuditResult.recorded, "every recorded result has its stored text here")
        for (result, text) in Self.storedText {
            #expect(result.rawValue == text)
            #expect(Self.caseName(AuditResult(rawValue: text)) == text, "\(text) reads as its own case")
            #expect(String(decoding: try JSONEncoder().encode([result]), as: UTF8.self) == "[\"\(text)\"]", "JSON: the stored text")
            #expect(try JSONDecoder().decode([AuditResult].self, from: Data("[\"\(text)\"]".utf8)) == [result])
        }
        let other = AuditResult(rawValue: "superseded")
        #expect(Self.caseName(other) == "unrecognized(superseded)" && other.rawValue == "superseded")
        #expect(!AuditResult.recorded.contains(other))
    }

    /// Each result written by the ledger is stored as its text, read back as its case, and found by a filter.
    @Test(arguments: Backend.all)
    func eachResultIsStoredAsItsTextAndReadBack(_ backend: Backend) async throws {
        try await withStore(backend) { store in
            let ledger = try store.open()
            for (i, (result, _)) in Self.storedText.enumerated() {
                try await ledger.record(AuditEvent(at: .ms(1_000 + Int64(i)), client: "c", action: .ban, subject: "s-\(i)", result: result))
            }
            let stored = try Self.raw(store, "SELECT result AS t FROM audit_events ORDER BY id")
            #expect(stored == Self.storedText.map(\.1), "the stored text is unchanged")
            let events = try await ledger.auditEvents(limit: 10, before: nil)
            #expect(events.reversed().map { Self.caseName($0.result) } == Self.storedText.map(\.1))
            for (i, (result, _)) in Self.storedText.enumerated() {
                #expect(try await ledger.auditEvents(limit: 10, before: nil, filter: AuditFilter(result: result)).map(\.subject) == ["s-\(i)"])
            }
        }
    }

    /// A result another version stored, in the audit trail and in a write intent, is listed, filtered and
    /// settled as stored: one unfamiliar row must not make the trail (or a device's unknown writes) unreadable.
    @Test(arguments: Backend.all)
    func aResultThisBuildDoesNotRecordIsKeptAsStored(_ backend: Backend) async throws {
        try await withStore(backend) { store in
            let ledger = try store.open()
            let id = try await ledger.record(AuditEvent(at: .ms(1_000), client: "c", action: "custom.new", result: .ok))
            try await ledger.recordWriteIntent(AuditAndIntentContractTests.intent("i-1"))
            try await ledger.resolveWriteIntent(id: "i-1", result: .unknown, bitsAfter: nil, reason: "timeout", transactionID: nil)
            _ = try Self.raw(store, "UPDATE audit_events SET result = 'superseded' WHERE id = \(id)")
            _ = try Self.raw(store, "UPDATE write_intents SET success_result = 'superseded' WHERE intent_id = 'i-1'")

            let event = try #require(try await ledger.auditEvent(id: id))
            #expect(Self.caseName(event.result) == "unrecognized(superseded)" && event.result.rawValue == "superseded")
            #expect(try await ledger.auditEvents(limit: 10, before: nil).count == 2)
            let filtered = try await ledger.auditEvents(limit: 10, before: nil, filter: AuditFilter(result: AuditResult(rawValue: "superseded")))
            #expect(filtered.map(\.id) == [id])
            let intent = try #require(try await ledger.unknownWriteIntents(tokenPrefix: "abcd1234", limit: 10).first)
            #expect(intent.successResult.rawValue == "superseded")
            try await ledger.resolveWriteIntent(id: "i-1", result: intent.successResult, bitsAfter: nil, reason: nil, transactionID: nil)
            #expect(try Self.raw(store, "SELECT result AS t FROM audit_events WHERE intent_id = 'i-1'") == ["superseded"], "written back as read")
        }
    }

    /// Runs `sql` on a connection of its own, as another version sharing the ledger would; the `t` column of each row.
    static func raw(_ store: LedgerStore, _ sql: String) throws -> [String?] {
        if let sqlite = store as? SQLiteStore {
            return try SQLiteConnection(path: sqlite.path).query(sql).map { row throws(StorageError) in try row.text("t") }
        }
        let postgres = try #require(store as? PostgresStore)
        return try postgres.connection().query(sql).map { row throws(StorageError) in try row.text("t") }
    }
}
