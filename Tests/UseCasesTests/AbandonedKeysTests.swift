import Foundation
import Ledger
import Locking
import Testing
import SQLiteLedger
@testable import UseCases

/// A real SQLite ledger's idempotency store whose `abandonIdempotent` fails while `failing` is set (the
/// database down at the moment an attempt ends), and whose `completeIdempotent` fails while `failingCompletes`
/// is set; every other call goes through.
final class FailingIdempotencyStore: IdempotencyStore, Sendable {
    let base: any IdempotencyStore
    let failing = Lock(true)
    let failingCompletes = Lock(false)
    init(_ base: any IdempotencyStore) { self.base = base }

    func abandonIdempotent(client: String, key: String) async throws(StorageError) {
        if failing.withLock({ $0 }) { throw StorageError("PostgreSQL unreachable: test", kind: .unreachable) }
        try await base.abandonIdempotent(client: client, key: key)
    }
    func beginIdempotent(client: String, key: String, requestHash: String, owner: String, now: Date) async throws(StorageError) -> IdempotencyBegin {
        try await base.beginIdempotent(client: client, key: key, requestHash: requestHash, owner: owner, now: now)
    }
    func recordIntent(client: String, key: String, intent: String) async throws(StorageError) { try await base.recordIntent(client: client, key: key, intent: intent) }
    func completeIdempotent(client: String, key: String, status: Int, body: Data) async throws(StorageError) {
        if failingCompletes.withLock({ $0 }) { throw StorageError("disk full: test") }
        try await base.completeIdempotent(client: client, key: key, status: status, body: body)
    }
}

/// An idempotency key whose give-back failed stays owned by this live process, and would answer
/// `request_in_progress` for its 24 hours; it is given back before the next claim.
@Suite struct AbandonedKeysTests {
    @Test func aKeyNotGivenBackIsGivenBackBeforeTheNextClaim() async throws {
        let directory = NSTemporaryDirectory() + "twobits-abandoned-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let ledger = FailingIdempotencyStore(try SQLiteLedger(path: directory + "/ledger.sqlite"))
        let owner = ClaimService.instance, now = Date()
        #expect(try await ledger.beginIdempotent(client: "c", key: "k", requestHash: "h", owner: owner, now: now) == .started)

        let abandoned = AbandonedKeys()
        await abandoned.giveBack(client: "c", key: "k", in: ledger)
        #expect(abandoned.count == 1)
        #expect(try await ledger.beginIdempotent(client: "c", key: "k", requestHash: "h", owner: owner, now: now) == .inProgress,
                "not given back: still this live process's")

        await abandoned.retry(in: ledger)
        #expect(abandoned.count == 1, "kept while the ledger still fails")
        ledger.failing.withLock { $0 = false }
        await abandoned.retry(in: ledger)
        #expect(abandoned.count == 0)
        #expect(try await ledger.beginIdempotent(client: "c", key: "k", requestHash: "h", owner: owner, now: now) == .started,
                "given back (no intent was recorded): the retry runs afresh")
    }
}
