import DeviceDomain
import Foundation
import Ledger
import Testing

/// An audit event's bits are typed (`BitsSnapshot`) but stored and shown as the text they always were; a stored
/// text this build does not write (another version's, another tool's) is kept readable and written back unchanged.
@Suite("Ledger contract: audit bit snapshots")
struct BitsSnapshotContractTests {
    static let november = YearMonth(year: 2026, month: 11)!

    static func state(_ b0: Bool, _ b1: Bool, _ month: YearMonth = november) -> BitState {
        BitState(bits: Bits(bit0: b0, bit1: b1), lastUpdated: month)
    }

    /// Every form this build writes and its stored text, written out: what the ledgers hold and the API shows.
    static let storedText: [(BitsSnapshot, String)] = [
        (.neverSet, "never-set"),
        (.state(state(false, false)), "(0,0)@2026-11"), (.state(state(true, false)), "(1,0)@2026-11"),
        (.state(state(false, true)), "(0,1)@2026-11"), (.state(state(true, true)), "(1,1)@2026-11"),
        (.state(state(true, false, YearMonth(year: 1970, month: 1)!), stale: true), "(1,0)@1970-01 (stale)"),
        (.state(state(false, true, YearMonth(year: 2025, month: 12)!), stale: true), "(0,1)@2025-12 (stale)"),
    ]

    /// The case itself, by pattern (`==` compares stored text, so it cannot tell `.unrecognized("never-set")` from `.neverSet`).
    static func caseName(_ snapshot: BitsSnapshot) -> String {
        switch snapshot {
        case .neverSet: "neverSet"
        case .state(let state, let stale): "state(\(state.bits.counter),\(state.lastUpdated.year),\(state.lastUpdated.month),\(stale))"
        case .unrecognized(let text): "unrecognized(\(text))"
        }
    }

    /// Texts near the written ones that no case prints back byte for byte: each is kept as it is.
    static let unrecognized = ["", "never set", "Never-set", "never-set (stale)", "(1,0)@2026-1", "(1,0)@2026-13", "(2,0)@2026-11",
                               "(1,0)", "(1,0)@", "@2026-11", "(1,0)@2026-11 (stale) (stale)", "(1,0)@2026-11(stale)", "(1,0)@2026-11 ",
                               " (1,0)@2026-11", "(1,0)@2026-11@2026-12", "(1, 0)@2026-11", "v9:(1,0,1)@2026-11", "(stale)"]

    @Test func everyFormRoundTripsThroughItsStoredText() throws {
        for (snapshot, text) in Self.storedText {
            #expect(snapshot.description == text)
            #expect(Self.caseName(BitsSnapshot(text)) == Self.caseName(snapshot), "\(text) reads as its own case")
            #expect(String(decoding: try JSONEncoder().encode([snapshot]), as: UTF8.self) == "[\"\(text)\"]", "JSON: the stored text")
            #expect(Self.caseName(try JSONDecoder().decode([BitsSnapshot].self, from: Data("[\"\(text)\"]".utf8))[0]) == Self.caseName(snapshot))
        }
        for text in Self.unrecognized {
            let read = BitsSnapshot(text)
            #expect(Self.caseName(read) == "unrecognized(\(text))" && read.description == text, "\"\(text)\" is kept as stored")
        }
        #expect(BitsSnapshot.unrecognized("never-set") == .neverSet, "equal when stored equal")
    }

    /// Each form written by the ledger is stored as its text and read back as its case.
    @Test(arguments: Backend.all)
    func eachFormIsStoredAsItsTextAndReadBack(_ backend: Backend) async throws {
        try await withStore(backend) { store in
            let ledger = try store.open()
            for (i, (snapshot, _)) in Self.storedText.enumerated() {
                try await ledger.record(AuditEvent(at: .ms(1_000 + Int64(i)), client: "c", action: .ban, subject: "s-\(i)", bitsBefore: snapshot,
                                                   bitsAfter: snapshot, result: .ok))
            }
            let texts = Self.storedText.map { Optional($0.1) }
            #expect(try AuditResultContractTests.raw(store, "SELECT bits_before AS t FROM audit_events ORDER BY id") == texts)
            #expect(try AuditResultContractTests.raw(store, "SELECT bits_after AS t FROM audit_events ORDER BY id") == texts)
            let events = try await ledger.auditEvents(limit: 20, before: nil).reversed()
            #expect(events.map { $0.bitsBefore.map(Self.caseName) } == Self.storedText.map { Self.caseName($0.0) })
            #expect(events.map { $0.bitsAfter.map(Self.caseName) } == Self.storedText.map { Self.caseName($0.0) })
        }
    }

    /// Bits another version stored, in the audit trail and in an unknown write intent, are listed as stored and,
    /// when the intent is settled with what was read, written back byte for byte.
    @Test(arguments: Backend.all)
    func bitsThisBuildDoesNotWriteAreKeptAsStored(_ backend: Backend) async throws {
        try await withStore(backend) { store in
            let ledger = try store.open()
            try await ledger.recordWriteIntent(AuditAndIntentContractTests.intent("i-1"))
            try await ledger.resolveWriteIntent(id: "i-1", result: .unknown, bitsAfter: .state(Self.state(true, false)), reason: "timeout",
                                                transactionID: nil)
            _ = try AuditResultContractTests.raw(store, "UPDATE audit_events SET bits_before = 'v9:(1,0,1)@2026-11', bits_after = '(1,0)@2026-1' "
                                                 + "WHERE intent_id = 'i-1'")

            let event = try #require(try await ledger.auditEvents(limit: 10, before: nil).first)
            #expect(event.bitsBefore.map(Self.caseName) == "unrecognized(v9:(1,0,1)@2026-11)")
            #expect(event.bitsAfter.map(Self.caseName) == "unrecognized((1,0)@2026-1)")
            let intent = try #require(try await ledger.unknownWriteIntents(tokenPrefix: "abcd1234", limit: 10).first)
            #expect(intent.event.bitsAfter?.description == "(1,0)@2026-1")
            try await ledger.resolveWriteIntent(id: "i-1", result: .ok, bitsAfter: intent.event.bitsAfter, reason: nil, transactionID: "tx")
            #expect(try AuditResultContractTests.raw(store, "SELECT bits_after AS t FROM audit_events WHERE intent_id = 'i-1'") == ["(1,0)@2026-1"],
                    "written back as read")
            #expect(try AuditResultContractTests.raw(store, "SELECT bits_before AS t FROM audit_events WHERE intent_id = 'i-1'")
                == ["v9:(1,0,1)@2026-11"])
        }
    }
}
