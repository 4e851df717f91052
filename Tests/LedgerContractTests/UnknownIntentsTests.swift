import Foundation
import Ledger
@testable import SQLiteLedger
import Testing

/// `SQLiteLedger.unknownWriteIntents` skips its query while no intent can be `unknown` (`UnknownIntents`):
/// every way an intent becomes unknown must raise the flag before the next question, and the flag may only
/// come down when the file holds none.
@Suite struct UnknownIntentsTests {
    static let prefix = "abcd1234"

    @Test func everyWayAnIntentBecomesUnknownIsSeenAndTheLastSettledOneLowersTheFlag() async throws {
        let store = try SQLiteStore()
        defer { store.destroy() }
        let ledger = try SQLiteLedger(path: store.path)
        #expect(!ledger.unknownIntents.mayExist, "a fresh file holds no unknown intent")
        try await ledger.recordWriteIntent(AuditAndIntentContractTests.intent("timed-out"))
        try await ledger.resolveWriteIntent(id: "timed-out", result: .unknown, bitsAfter: nil, reason: "timeout", transactionID: nil)
        #expect(try await ledger.unknownWriteIntents(tokenPrefix: Self.prefix, limit: 10).map(\.id) == ["timed-out"])
        try await ledger.recordWriteIntent(AuditAndIntentContractTests.intent("in-flight"))
        try await ledger.resolveWriteIntent(id: "timed-out", result: .ok, bitsAfter: nil, reason: nil, transactionID: nil)
        #expect(!ledger.unknownIntents.mayExist, "the last unknown intent was settled (a pending one is not unknown)")
        #expect(try await ledger.unknownWriteIntents(tokenPrefix: Self.prefix, limit: 10).isEmpty)

        // A process that stopped with the intent in flight: the next start marks it unknown.
        await #expect(try ledger.markInterruptedWriteIntents(reason: "stopped") == 1)
        #expect(try await ledger.unknownWriteIntents(tokenPrefix: Self.prefix, limit: 10).map(\.id) == ["in-flight"])

        // Reopened, the file still holds it: the flag starts raised.
        let reopened = try SQLiteLedger(path: store.path)
        #expect(try await reopened.unknownWriteIntents(tokenPrefix: Self.prefix, limit: 10).map(\.id) == ["in-flight"])
        try await reopened.resolveWriteIntent(id: "in-flight", result: .failed, bitsAfter: nil, reason: nil, transactionID: nil)
        #expect(try SQLiteLedger(path: store.path).unknownIntents.mayExist == false)

        // A start that finds nothing in flight leaves the flag down: every request would ask otherwise.
        let quiet = try SQLiteLedger(path: store.path)
        await #expect(try quiet.markInterruptedWriteIntents(reason: "stopped") == 0)
        #expect(!quiet.unknownIntents.mayExist, "a start-up marking that found nothing")
    }
}
