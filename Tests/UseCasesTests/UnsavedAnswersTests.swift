import Foundation
import Ledger
import Mechanisms
import Testing
import SQLiteLedger
@testable import UseCases

/// Issue 34: the answer of a keyed claim Apple wrote, which the ledger refused to store, is kept and stored by
/// a later retry, oldest first; until then the key stays this live process's.
@Suite struct UnsavedAnswersTests {
    @Test func aKeptAnswerIsStoredOnceTheLedgerTakesItAndIsThenReplayed() async throws {
        let directory = NSTemporaryDirectory() + "twobits-unsaved-answers-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // The seam of AbandonedKeysTests, its give-backs failing too: the answer must be kept, not given back.
        let ledger = FailingIdempotencyStore(try SQLiteLedger(path: directory + "/ledger.sqlite"))
        let owner = ClaimService.instance, now = Date()
        for key in ["k1", "k2"] {
            #expect(try await ledger.beginIdempotent(client: "c", key: key, requestHash: "h", owner: owner, now: now) == .started)
            try await ledger.recordIntent(client: "c", key: key, intent: "promotion.claim spring")
        }
        ledger.failingCompletes.withLock { $0 = true }
        let answers = RetryQueue<UnsavedAnswer>(limit: UnsavedAnswer.limit)
        #expect(answers.keep(UnsavedAnswer(client: "c", key: "k1", answer: RecordedAnswer(status: 200, body: Data("first".utf8)))))
        #expect(answers.keep(UnsavedAnswer(client: "c", key: "k2", answer: RecordedAnswer(status: 200, body: Data("second".utf8)))))
        await answers.retry { try await $0.store(in: ledger) }
        #expect(answers.count == 2, "kept while the ledger still fails")
        #expect(try await ledger.beginIdempotent(client: "c", key: "k1", requestHash: "h", owner: owner, now: now) == .inProgress,
                "not stored: still this live process's, not given back")

        ledger.failingCompletes.withLock { $0 = false }
        await answers.retry { try await $0.store(in: ledger) }
        #expect(answers.count == 0)
        #expect(try await ledger.beginIdempotent(client: "c", key: "k1", requestHash: "h", owner: owner, now: now) == .replay(status: 200, body: Data("first".utf8)))
        #expect(try await ledger.beginIdempotent(client: "c", key: "k2", requestHash: "h", owner: owner, now: now) == .replay(status: 200, body: Data("second".utf8)))
    }
}
