import Foundation
import Ledger
@testable import PostgresLedger
import Testing

/// The one-statement ledger calls share round trips and commits (libpq's pipeline mode): each must still
/// have the outcome it would have alone, be answered to its own caller, be refused in time when no
/// connection is free, and be carried on by a fresh connection when its connection breaks.
@Suite("PostgreSQL pipelines", .serialized)
struct PipelineTests {
    @Test func eachPipelinedStatementHasTheOutcomeItWouldHaveAlone() async throws {
        try await withPostgres { store in
            let db = try store.connection()
            try db.execute("CREATE TABLE pipeline_probe (v integer PRIMARY KEY)")
            let insert = "INSERT INTO pipeline_probe (v) VALUES ($1::integer)"
            let results = db.pipeline([
                PostgresStatement(sql: insert, parameters: [.integer(1)]),
                PostgresStatement(sql: "SELECT 1 / ($1::integer - 5) AS v", parameters: [.integer(5)]),
                PostgresStatement(sql: insert, parameters: [.integer(2)]),
                PostgresStatement(sql: insert, parameters: [.integer(1)]),
                PostgresStatement(sql: "SELECT count(*)::bigint AS n FROM pipeline_probe WHERE v > $1::integer", parameters: [.integer(0)]),
            ])
            try #require(results.count == 5)
            // All succeeding: one commit, and binary (bytea, with a zero byte) and null parameters bound right.
            let bytes = Data([0x00, 0xff, 0x00, 0x7f])
            let together = db.pipeline([
                PostgresStatement(sql: "SELECT $1::bytea AS b, $2::text IS NULL AS absent", parameters: [.bytea(bytes), .null]),
                PostgresStatement(sql: "SELECT length($1::bytea)::bigint AS n", parameters: [.bytea(Data())]),
                PostgresStatement(sql: insert, parameters: [.integer(3)]),
            ])
            let first = try #require(try together[0].get().first)
            #expect(first.bytes("b") == bytes && first.bool("absent") == true)
            #expect(try together[1].get().first?.int("n") == 0)
            #expect((try? together[2].get()) != nil)
            _ = try db.query("DELETE FROM pipeline_probe WHERE v = $1::integer", [.integer(3)])
            #expect((try? results[0].get()) != nil)
            if case .failure(let error) = results[1] { #expect(error.sqlState == "22012", "\(error)") } else { Issue.record("1/0 answered") }
            #expect((try? results[2].get()) != nil, "a failure before a statement does not abort it")
            if case .failure(let error) = results[3] { #expect(error.sqlState == "23505", "\(error)") } else { Issue.record("a duplicate key inserted") }
            #expect((try? results[4].get())?.first?.int("n") == 2)
            // The failures rolled the batch back and each statement ran again alone: another session sees both rows.
            #expect(try store.connection().query("SELECT count(*)::bigint AS n FROM pipeline_probe WHERE v > $1::integer", [.integer(0)]).first?.int("n") == 2)
            // The connection is out of pipeline mode and usable as before.
            #expect(try db.query("SELECT $1::bigint AS v", [.integer(7)]).first?.int("v") == 7)
        }
    }

    @Test func statementsQueuedTogetherShareARoundTripAndEachGetsItsOwnAnswer() async throws {
        try await withPostgres { store in
            let ledger = try store.openPostgres(pipelineConnections: 1)
            // The one pipeline connection is busy: what comes meanwhile queues, then leaves in few round trips.
            let busy = Task { try await ledger.statement("SELECT pg_sleep($1::float8 / 1000) IS NULL AS slept", [.integer(400)]) }
            try await Task.sleep(for: .milliseconds(100))
            let answers = try await withThrowingTaskGroup(of: (Int, Int?).self) { group in
                for i in 0..<100 {
                    group.addTask {
                        // Every tenth call fails (division by zero); its neighbours in the pipeline must not.
                        let sql = i % 10 == 3 ? "SELECT $1::bigint / 0 AS v" : "SELECT $1::bigint AS v"
                        do { return (i, try await ledger.statement(sql, [.int(i)]).first?.int("v")) } catch { return (i, nil) }
                    }
                }
                var all: [Int: Int?] = [:]
                for try await (i, v) in group { all[i] = v }
                return all
            }
            _ = try await busy.value
            for i in 0..<100 {
                #expect(answers[i] == (i % 10 == 3 ? Int?.none : i), "call \(i)")
            }
            #expect(ledger.pipelines.largestPipeline == ConnectionPool.pipelineLimit, "queued statements went out together")
        }
    }

    @Test func aBusyPipelineFailsTheNextCallWithinItsWait() async throws {
        try await withPostgres { store in
            let ledger = try store.openPostgres(pipelineConnections: 1, poolWait: .milliseconds(300))
            #expect(try await ledger.rememberDeviceToken(digest: "warm", until: Date().addingTimeInterval(60), now: Date()))
            let busy = Task { try await ledger.statement("SELECT pg_sleep(1.5) IS NULL AS slept", []) }
            try await Task.sleep(for: .milliseconds(100))
            let start = ContinuousClock.now
            await #expect(throws: StorageError.self) {
                try await ledger.rememberDeviceToken(digest: "d", until: Date().addingTimeInterval(60), now: Date())
            }
            let waited = ContinuousClock.now - start
            #expect(waited >= .milliseconds(250) && waited < .milliseconds(900), "\(waited)")
            _ = try await busy.value
            #expect(try await ledger.rememberDeviceToken(digest: "d", until: Date().addingTimeInterval(60), now: Date()),
                    "the refused call wrote nothing")
        }
    }

    @Test func aBrokenPipelineConnectionFailsItsCallAndTheQueuedOnesGoOnAFreshOne() async throws {
        try await withPostgres { store in
            let ledger = try store.openPostgres(pipelineConnections: 1)
            let sleeping = Task { try await ledger.statement("SELECT pg_sleep(2) IS NULL AS slept", []) }
            try await Task.sleep(for: .milliseconds(200))
            let queued = (0..<5).map { i in Task { try await ledger.statement("SELECT $1::bigint AS v", [.int(i)]).first?.int("v") } }
            try await Task.sleep(for: .milliseconds(100))
            let killed = try store.connection().query("""
                SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity
                WHERE datname = current_database() AND query LIKE 'SELECT pg_sleep(2)%' AND pid <> pg_backend_pid()
                """).count
            #expect(killed == 1)
            do {
                _ = try await sleeping.value
                Issue.record("a statement on a terminated connection succeeded")
            } catch {
                #expect("\(error)".contains("PostgreSQL unreachable"), "\(error)")
            }
            for (i, task) in queued.enumerated() { #expect(try await task.value == i) }
        }
    }

    /// A migration from another replica changes a table under statements prepared on a pipeline connection:
    /// the statements of a pipeline that meet the stale plan run again afresh.
    @Test func aTableChangedUnderPipelinedStatementsIsReadAfresh() async throws {
        try await withPostgres { store in
            let ledger = try store.openPostgres(pipelineConnections: 1)
            #expect(try await ledger.unknownWriteIntents(tokenPrefix: "p", limit: 5).isEmpty)   // prepared `SELECT a.*`
            try store.connection().execute("ALTER TABLE audit_events ADD COLUMN added_later TEXT")
            let busy = Task { try await ledger.statement("SELECT pg_sleep(0.3) IS NULL AS slept", []) }
            try await Task.sleep(for: .milliseconds(100))
            let reads = (0..<3).map { _ in Task { try await ledger.unknownWriteIntents(tokenPrefix: "p", limit: 5) } }
            _ = try await busy.value
            for read in reads { #expect(try await read.value.isEmpty) }
            #expect(ledger.pipelines.largestPipeline >= 3)
        }
    }
}
