@testable import EventLoops
import Foundation
import Ledger
import Locking
@testable import SQLiteLedger
import Testing

/// The SQLite ledger's hot writes made on an event loop in one turn share one commit (`GroupCommit`): each
/// must still have the outcome it would have had alone, and be answered to its own caller.
@Suite("SQLite group commit")
struct GroupCommitTests {
    /// Starts `count` tasks on `loop` from the loop itself, so that all of them run in the same turn, and
    /// returns what each returned (or nil when it threw), by index.
    static func onOneTurn<T: Sendable>(of loop: EventLoop, count: Int, _ body: @escaping @Sendable (Int) async throws -> T) async -> [T?] {
        await starting(count, on: loop, consecutiveTurns: false, body)
    }

    /// Starts `count` tasks on `loop`, one on each of consecutive turns, and returns what each returned.
    static func onConsecutiveTurns<T: Sendable>(of loop: EventLoop, count: Int, _ body: @escaping @Sendable (Int) async throws -> T) async -> [T?] {
        await starting(count, on: loop, consecutiveTurns: true, body)
    }

    private static func starting<T: Sendable>(_ count: Int, on loop: EventLoop, consecutiveTurns: Bool,
                                              _ body: @escaping @Sendable (Int) async throws -> T) async -> [T?] {
        let answers = Lock([T?](repeating: nil, count: count))
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            let left = Lock(count)
            @Sendable func start(_ i: Int) {
                Task(executorPreference: loop) {
                    let answer = try? await body(i)
                    answers.withLock { $0[i] = answer }
                    if left.withLock({ n -> Int in n -= 1; return n }) == 0 { done.resume() }
                }
                // A loop job started from a loop job runs at the loop's next turn.
                if i + 1 < count {
                    if consecutiveTurns { loop.execute { start(i + 1) } } else { start(i + 1) }
                }
            }
            loop.execute { start(0) }
        }
        return answers.withLock { $0 }
    }

    /// The device-token uses committed to the file, read through a connection of its own.
    static func committedUses(in store: SQLiteStore) throws -> Int? {
        try SQLiteConnection(path: store.path).query("SELECT count(*) AS n FROM device_token_uses").first?.int("n")
    }

    /// A SQLite ledger in a fresh file, and an event loop to call it from; both gone afterwards.
    static func withLedgerAndLoop(_ body: (SQLiteStore, SQLiteLedger, EventLoop) async throws -> Void) async throws {
        let store = try SQLiteStore()
        defer { store.destroy() }
        let loop = EventLoop(name: "group-commit-test")
        defer { loop.stop() }
        try await body(store, try SQLiteLedger(path: store.path), loop)
    }

    @Test func writesMadeInOneTurnShareOneCommitAndEachGetsItsOwnAnswer() async throws {
        try await Self.withLedgerAndLoop { store, ledger, loop in
            let now = Date()
            // 25 digests, each asked for twice in the same turn: the first of each pair is new, the second a reuse.
            let firstSeen = await Self.onOneTurn(of: loop, count: 50) { i in
                try await ledger.rememberDeviceToken(digest: "digest-\(i % 25)", until: now.addingTimeInterval(60), now: now)
            }
            #expect(firstSeen[..<25].allSatisfy { $0 == true })
            #expect(firstSeen[25...].allSatisfy { $0 == false })
            let statistics = ledger.groupCommitStatistics
            #expect(statistics.commits == 1 && statistics.largestBatch == 50, "\(statistics)")
            // Committed: another connection to the file sees every row.
            let uses = try Self.committedUses(in: store)
            #expect(uses == 25)
        }
    }

    /// Under load (the last commit held several writes) a batch waits while the turns add writes to it.
    @Test func underLoadWritesOfConsecutiveTurnsShareOneCommit() async throws {
        try await Self.withLedgerAndLoop { store, ledger, loop in
            let now = Date()
            #expect(ledger.groupCommit.lingerTurns == 3)   // docs/architecture.md
            // A quiet loop: one write on each of three turns, a commit each; a write made while the loop's
            // last batch is still on the ledger thread joins the next one (two commits then).
            let quiet = await Self.onConsecutiveTurns(of: loop, count: 3) { i in
                try await ledger.rememberDeviceToken(digest: "quiet-\(i)", until: now.addingTimeInterval(60), now: now)
            }
            #expect(quiet.allSatisfy { $0 == true })
            let quietCommits = ledger.groupCommitStatistics.commits
            #expect((2...3).contains(quietCommits), "\(ledger.groupCommitStatistics)")
            // Load: a commit of five writes, then one write on each of three turns, all in one more commit.
            _ = await Self.onOneTurn(of: loop, count: 5) { i in
                try await ledger.rememberDeviceToken(digest: "busy-\(i)", until: now.addingTimeInterval(60), now: now)
            }
            let spread = await Self.onConsecutiveTurns(of: loop, count: 3) { i in
                try await ledger.rememberDeviceToken(digest: "spread-\(i)", until: now.addingTimeInterval(60), now: now)
            }
            #expect(spread.allSatisfy { $0 == true })
            let statistics = ledger.groupCommitStatistics
            #expect(statistics.commits == quietCommits + 2 && statistics.writes == 11, "\(statistics)")
            let uses = try Self.committedUses(in: store)
            #expect(uses == 11)
        }
    }

    /// The ledger thread resumes a batch's callers itself (their tasks go to their loop's inbox) before the loop
    /// has taken the batch back: each caller still goes on on its own loop, and a write it makes at once,
    /// while its loop still counts the batch in flight, is committed with the others of that turn.
    @Test func callersResumedByTheirCommitGoOnOnTheirLoopAndTheirNextWritesShareTheNextCommit() async throws {
        try await Self.withLedgerAndLoop { store, ledger, loop in
            let now = Date()
            let answers = await Self.onOneTurn(of: loop, count: 20) { i -> Bool in
                let first = try await ledger.rememberDeviceToken(digest: "first-\(i)", until: now.addingTimeInterval(60), now: now)
                let onItsLoop = EventLoop.current === loop
                let second = try await ledger.rememberDeviceToken(digest: "second-\(i)", until: now.addingTimeInterval(60), now: now)
                return first && onItsLoop && second && EventLoop.current === loop
            }
            #expect(answers.allSatisfy { $0 == true })
            let statistics = ledger.groupCommitStatistics
            #expect(statistics.commits == 2 && statistics.largestBatch == 20 && statistics.writes == 40, "\(statistics)")
            let uses = try Self.committedUses(in: store)
            #expect(uses == 40)
        }
    }

    @Test func aLongTurnIsCommittedInTransactionsOfAtMostTheLimit() async throws {
        try await Self.withLedgerAndLoop { store, ledger, loop in
            let now = Date()
            let limit = 128   // docs/architecture.md
            #expect(ledger.groupCommit.batchLimit == limit)
            let count = 2 * limit + 44
            let firstSeen = await Self.onOneTurn(of: loop, count: count) { i in
                try await ledger.rememberDeviceToken(digest: "digest-\(i)", until: now.addingTimeInterval(60), now: now)
            }
            #expect(firstSeen.allSatisfy { $0 == true })
            let statistics = ledger.groupCommitStatistics
            #expect(statistics.commits == 3 && statistics.largestBatch == limit && statistics.writes == count, "\(statistics)")
            let uses = try Self.committedUses(in: store)
            #expect(uses == count)
        }
    }

    @Test func aWriteThatFailsInABatchFailsAloneAndTheOthersAreCommitted() async throws {
        try await Self.withLedgerAndLoop { store, ledger, loop in
            // Eleven intents in one turn; the last repeats the id of the fourth, which the unique index refuses.
            let recorded = await Self.onOneTurn(of: loop, count: 11) { i in
                try await ledger.recordWriteIntent(AuditAndIntentContractTests.intent("intent-\(i == 10 ? 3 : i)"))
                return try await ledger.auditEvents(limit: 100, before: nil).count
            }
            #expect(recorded[..<10].allSatisfy { $0 != nil }, "\(recorded)")
            #expect(recorded[10] == nil)
            #expect(ledger.groupCommitStatistics.largestBatch == 11)
            let other = try SQLiteConnection(path: store.path)
            #expect(try other.query("SELECT count(*) AS n FROM write_intents").first?.int("n") == 10)
            #expect(try other.query("SELECT count(*) AS n FROM audit_events WHERE intent_id = 'intent-3'").first?.int("n") == 1)
            // Resolutions and the read of unsettled intents go through the same commits.
            let settled = await Self.onOneTurn(of: loop, count: 10) { i in
                try await ledger.resolveWriteIntent(id: "intent-\(i)", result: i < 4 ? .unknown : .ok, bitsAfter: nil, reason: nil, transactionID: nil)
                return try await ledger.unknownWriteIntents(tokenPrefix: "abcd1234", limit: 100).count
            }
            #expect(settled.allSatisfy { $0 == 4 }, "\(settled)")
        }
    }

    /// A ledger that is gone leaves no queue of its writes on the loops it wrote from.
    @Test func aLedgerThatIsGoneLeavesNoQueueOnItsLoop() async throws {
        let store = try SQLiteStore()
        defer { store.destroy() }
        let loop = EventLoop(name: "group-commit-gone")
        defer { loop.stop() }
        var ledger: SQLiteLedger? = try SQLiteLedger(path: store.path)
        let now = Date()
        let wrote = await Self.onOneTurn(of: loop, count: 1) { [ledger] _ in
            try await ledger!.rememberDeviceToken(digest: "digest", until: now.addingTimeInterval(60), now: now)
        }
        #expect(wrote == [true])
        let count = { await Task(executorPreference: loop) { EventLoop.current?.localValueCount ?? -1 }.value }
        #expect(await count() == 1)
        ledger = nil
        var left = await count()
        for _ in 0..<50 where left != 0 {
            try await Task.sleep(for: .milliseconds(20))
            left = await count()
        }
        #expect(left == 0)
    }

    /// Issue 34, the stalled disk: once the ledger thread has been held past its stall limit, a new write is
    /// refused at once (a store fault: 503 `storage_unavailable`), even on a loop whose previous batch is the
    /// one stuck on the thread; queued behind that batch it waited for the stall (in CI: until its deadline).
    @Test func aWriteOnALoopWhoseBatchIsStuckOnAStalledDiskIsRefusedAtOnce() async throws {
        let store = try SQLiteStore()
        defer { store.destroy() }
        let loop = EventLoop(name: "group-commit-stall")
        defer { loop.stop() }
        let ledger = try SQLiteLedger(path: store.path, stallLimit: .milliseconds(200))
        // The disk stalls: a job holds the ledger thread until released (at the latest after 10 s, so that the
        // old code's waiting write ends and the test fails rather than hangs).
        let release = DispatchSemaphore(value: 0)
        #expect(ledger.thread.submit { _ = release.wait(timeout: .now() + 10) } == nil)
        let now = Date()
        // This loop's batch goes to the held thread and stays in flight.
        let stuck = Task(executorPreference: loop) {
            try await ledger.rememberDeviceToken(digest: "stuck", until: now.addingTimeInterval(60), now: now)
        }
        // Past the stall limit (polled: a loaded machine may start the held job late).
        for _ in 0..<200 where ledger.thread.stalled == nil { try await Task.sleep(for: .milliseconds(20)) }
        #expect(ledger.thread.stalled != nil)
        let refused = await Task(executorPreference: loop) { () -> StorageError? in
            do throws(StorageError) {
                _ = try await ledger.rememberDeviceToken(digest: "after-the-stall", until: now.addingTimeInterval(60), now: now)
                return nil
            } catch { return error }
        }.value
        release.signal()
        #expect(refused?.storeFault == true, "\(String(describing: refused))")
        // The stuck write runs once the disk is back.
        #expect(try await stuck.value == true)
    }
}
