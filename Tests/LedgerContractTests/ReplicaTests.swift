import Foundation
import Ledger
import Locking
@testable import PostgresLedger
@testable import SQLiteLedger
import Testing

/// Several PostgresLedger instances on one database are several replicas: what one process guaranteed
/// alone must hold across them.
@Suite("PostgreSQL replicas", .serialized)
struct ReplicaTests {
    let now = Date.ms(1_800_000_000_000)

    @Test func aDeviceTokenRacedOnThreeReplicasIsAcceptedOnce() async throws {
        try await withPostgres { store in
            let replicas = try (0..<3).map { _ in try store.openPostgres() }
            let until = now.addingTimeInterval(60)
            let results = try await withThrowingTaskGroup(of: Bool.self) { group in
                for i in 0..<20 { group.addTask { try await replicas[i % 3].rememberDeviceToken(digest: "same", until: until, now: now) } }
                return try await group.reduce(into: [Bool]()) { $0.append($1) }
            }
            #expect(results.filter { $0 }.count == 1)
            #expect(results.count == 20)
        }
    }

    /// Installs of one device reaching three replicas at once: one replica takes the pending order; while
    /// it lives the others leave it alone.
    @Test func anAppAttestCounterRacedOnThreeReplicasAdvancesOnce() async throws {
        try await withPostgres { store in
            let replicas = try (0..<3).map { _ in try store.openPostgres() }
            #expect(try await replicas[0].storeAppAttestKey(AppAttestContractTests.key("raced")))
            let outcomes = try await withThrowingTaskGroup(of: CounterAdvance.self) { group in
                for i in 0..<18 { group.addTask { try await replicas[i % 3].advanceAppAttestCounter(keyID: "raced", to: 1) } }
                return try await group.reduce(into: [CounterAdvance]()) { $0.append($1) }
            }
            #expect(outcomes.filter { $0 == .advanced }.count == 1)
            #expect(outcomes.count == 18)
        }
    }

    @Test func aChallengeConsumedOnThreeReplicasIsUsedOnce() async throws {
        try await withPostgres { store in
            let replicas = try (0..<3).map { _ in try store.openPostgres() }
            #expect(try await replicas[1].issueAppAttestChallenge(digest: "one", until: now.addingTimeInterval(300), now: now))
            let results = try await withThrowingTaskGroup(of: Bool.self) { group in
                for i in 0..<18 { group.addTask { try await replicas[i % 3].consumeAppAttestChallenge(digest: "one", now: now) } }
                return try await group.reduce(into: [Bool]()) { $0.append($1) }
            }
            #expect(results.filter { $0 }.count == 1)
        }
    }

    /// The rate limits are the deployment's totals, shared by the replicas the presence connections count.
    @Test func replicasCountEachOtherAndStopCountingOneThatCloses() async throws {
        try await withPostgres { store in
            let replicas = try (0..<3).map { _ in try store.openPostgres() }
            for replica in replicas { #expect(try await replica.liveReplicas() == 3) }
            replicas[2].close()
            var left = 0
            for _ in 0..<50 {
                left = try await replicas[0].liveReplicas()
                if left == 2 { break }
                try await Task.sleep(for: .milliseconds(100))
            }
            #expect(left == 2)
            #expect(try await replicas[1].liveReplicas() == 2)
        }
    }

    @Test func aPendingOrderRacedOnThreeReplicasIsTakenOnce() async throws {
        try await withPostgres { store in
            let replicas = try (0..<3).map { _ in try store.openPostgres() }
            try await replicas[0].order(PendingDeviceAction(installID: "inst", kind: .ban, reason: nil, client: "admin", createdAt: now))
            let taken = try await withThrowingTaskGroup(of: Bool.self) { group in
                for i in 0..<12 { group.addTask { try await replicas[i % 3].claimPendingAction(installID: "inst") != nil } }
                return try await group.reduce(into: [Bool]()) { $0.append($1) }
            }
            #expect(taken.filter { $0 }.count == 1)
        }
    }

    /// Statements are prepared once per connection; a table changed under a prepared `SELECT *` (a newer
    /// replica migrating) must not break the older replica's calls.
    @Test func aTableChangedUnderAPreparedStatementIsReadAfresh() async throws {
        try await withPostgres { store in
            let ledger = try store.openPostgres(poolSize: 1)
            let ban = PendingDeviceAction(installID: "inst", kind: .ban, reason: nil, client: "admin", createdAt: now)
            try await ledger.order(ban)
            #expect(try await ledger.pendingAction(installID: "inst") == ban)
            try store.connection().execute("ALTER TABLE pending_actions ADD COLUMN added_later TEXT")
            #expect(try await ledger.pendingActions() == [ban])
            #expect(try await ledger.pendingAction(installID: "inst") == ban)
        }
    }

    @Test func aTokenIDRacedOnThreeReplicasIsConsumedOnce() async throws {
        try await withPostgres { store in
            let replicas = try (0..<3).map { _ in try store.openPostgres() }
            let until = now.addingTimeInterval(60)
            // An expired row first: the race is on replacing it, the harder case.
            #expect(try await replicas[0].consumeTokenID("jti", until: now, now: now.addingTimeInterval(-10)))
            let results = try await withThrowingTaskGroup(of: Bool.self) { group in
                for i in 0..<20 { group.addTask { try await replicas[i % 3].consumeTokenID("jti", until: until, now: now) } }
                return try await group.reduce(into: [Bool]()) { $0.append($1) }
            }
            #expect(results.filter { $0 }.count == 1)
        }
    }

    @Test func aKeyRacedOnThreeReplicasStartsOnceAndIsInProgressElsewhere() async throws {
        try await withPostgres { store in
            let replicas = try (0..<3).map { _ in try store.openPostgres() }
            let owners = (0..<3).map { "process-\($0)-" + UUID().uuidString }
            let results = try await withThrowingTaskGroup(of: IdempotencyBegin.self) { group in
                for i in 0..<21 {
                    group.addTask { try await replicas[i % 3].beginIdempotent(client: "c", key: "k", requestHash: "h", owner: owners[i % 3], now: now) }
                }
                return try await group.reduce(into: [IdempotencyBegin]()) { $0.append($1) }
            }
            #expect(results.filter { $0 == .started }.count == 1)
            #expect(results.filter { $0 == .inProgress }.count == 20, "the owner is alive: a twin, never a takeover")
        }
    }

    @Test func aForeignLiveOwnerIsInProgressUntilItsLedgerCloses() async throws {
        try await withPostgres { store in
            let a = try store.openPostgres()
            let b = try store.openPostgres()
            #expect(try await a.beginIdempotent(client: "c", key: "k", requestHash: "h", owner: "process-a", now: now) == .started)
            try await a.recordIntent(client: "c", key: "k", intent: "(1,1)")
            #expect(try await b.beginIdempotent(client: "c", key: "k", requestHash: "h", owner: "process-b", now: now) == .inProgress)
            a.close()   // the process is gone: its connections, and its presence lock with them
            #expect(try await b.beginIdempotent(client: "c", key: "k", requestHash: "h", owner: "process-b", now: now) == .unfinished(intent: "(1,1)"))
            #expect(try await b.beginIdempotent(client: "c", key: "k", requestHash: "h", owner: "process-b", now: now) == .inProgress)
        }
    }

    @Test func aLiveReplicasPendingIntentIsNotMarkedByAnotherReplicaStarting() async throws {
        try await withPostgres { store in
            let a = try store.openPostgres()
            try await a.recordWriteIntent(AuditAndIntentContractTests.intent("in-flight"))
            let b = try store.openPostgres()
            #expect(try await b.markInterruptedWriteIntents(reason: "restart") == 0)
            #expect(try await b.auditEvents(limit: 1, before: nil).first?.result == .pending)
            a.close()
            #expect(try await b.markInterruptedWriteIntents(reason: "restart") == 1)
            #expect(try await b.auditEvents(limit: 1, before: nil).first?.result == .unknown)
        }
    }

    @Test func theAuditTrailIsOneHistoryAcrossReplicas() async throws {
        try await withPostgres { store in
            let replicas = try (0..<3).map { _ in try store.openPostgres() }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for i in 0..<30 {
                    group.addTask { try await replicas[i % 3].record(AuditEvent(client: "r\(i % 3)", action: "custom.\(i)", result: .ok)) }
                }
                try await group.waitForAll()
            }
            let seen = try await replicas.asyncMap { try await $0.auditEvents(limit: 100, before: nil) }
            #expect(seen[0].count == 30)
            #expect(seen[0] == seen[1] && seen[1] == seen[2])
            #expect(seen[0].map(\.id) == seen[0].map(\.id).sorted(by: >))
        }
    }

    @Test func replicasStartingTogetherMigrateOnce() async throws {
        try await withPostgres { store in
            let uri = store.uri
            let ledgers = try await withThrowingTaskGroup(of: PostgresLedger.self) { group in
                for _ in 0..<4 { group.addTask { try PostgresLedger(uri: uri, poolSize: 1) } }
                return try await group.reduce(into: [PostgresLedger]()) { $0.append($1) }
            }
            defer { ledgers.forEach { $0.close() } }
            for ledger in ledgers { #expect(try await ledger.schemaVersion() == PostgresLedger.latestSchemaVersion) }
            let rows = try store.connection().query("SELECT version FROM schema_migrations ORDER BY version")
            #expect(rows.map { $0.int("version") } == (1...PostgresLedger.latestSchemaVersion).map { $0 })
            let migrated = try PostgresLedger.migrate(uri: store.uri)
            #expect(migrated.from == PostgresLedger.latestSchemaVersion && migrated.to == PostgresLedger.latestSchemaVersion)
        }
    }

    @Test func migrateReportsTheVersionsOfAnEmptyDatabase() async throws {
        try await withPostgres { store in
            let migrated = try PostgresLedger.migrate(uri: store.uri)
            #expect(migrated.from == 0 && migrated.to == PostgresLedger.latestSchemaVersion)
            let again = try PostgresLedger.migrate(uri: store.uri)
            #expect(again.from == PostgresLedger.latestSchemaVersion && again.to == PostgresLedger.latestSchemaVersion)
        }
    }

    @Test func aNewerSchemaIsRefusedWithAMessageThatSaysSo() async throws {
        try await withPostgres { store in
            _ = try PostgresLedger.migrate(uri: store.uri)
            let newer = PostgresLedger.latestSchemaVersion + 1
            try store.connection().query("INSERT INTO schema_migrations (version) VALUES ($1)", [.int(newer)])
            let expected = "the database has schema version \(newer), newer than this build knows (\(PostgresLedger.latestSchemaVersion)); upgrade TwoBits"
            for applyMigrations in [true, false] {
                do {
                    _ = try PostgresLedger(uri: store.uri, applyMigrations: applyMigrations)
                    Issue.record("a newer schema was opened")
                } catch { #expect("\(error)".contains(expected), "\(error)") }
            }
            #expect(throws: StorageError.self) { try PostgresLedger.migrate(uri: store.uri) }
        }
    }

    /// The pool's reaper ticks while calls come and sleeps untimed after a quiet spell (more than three waits):
    /// a call must be refused in time either way.
    @Test(arguments: [Duration.zero, .milliseconds(1_500)])
    func aBusyPoolFailsTheNextCallWithinItsWait(quietSpell: Duration) async throws {
        try await withPostgres { store in
            let ledger = try store.openPostgres(poolSize: 1, poolWait: .milliseconds(300))
            _ = try await ledger.schemaVersion()   // the one connection is up
            try await Task.sleep(for: quietSpell)
            let busy = Task { try await ledger.run { db throws(PostgresError) in try db.query("SELECT pg_sleep(1.5)") } }
            try await Task.sleep(for: .milliseconds(100))
            let start = ContinuousClock.now
            await #expect(throws: StorageError.self) { try await ledger.record(AuditEvent(client: "c", action: "x", result: .ok)) }
            let waited = ContinuousClock.now - start
            #expect(waited >= .milliseconds(250) && waited < .milliseconds(900), "\(waited)")
            _ = try await busy.value
            #expect(try await ledger.auditEvents(limit: 10, before: nil).isEmpty, "the refused call wrote nothing")
            _ = try await ledger.record(AuditEvent(client: "c", action: "x", result: .ok))
        }
    }

    @Test func deadlocksAreRetriedAndOtherErrorsAreNot() async throws {
        try await withPostgres { store in
            let ledger = try store.openPostgres(poolSize: 1)
            let attempts = Lock(0)
            let value = try await ledger.run { db throws(PostgresError) -> Int in
                let n = attempts.withLock { n -> Int in n += 1; return n }
                if n < 3 { throw PostgresError(sqlState: n == 1 ? "40P01" : "40001", message: "deadlock detected") }
                return try db.query("SELECT 7 AS v").first?.int("v") ?? 0
            }
            #expect(value == 7)
            #expect(attempts.withLock { $0 } == 3)

            attempts.withLock { $0 = 0 }
            await #expect(throws: StorageError.self) {
                try await ledger.run { _ throws(PostgresError) in
                    attempts.withLock { $0 += 1 }
                    throw PostgresError(sqlState: "40001", message: "could not serialize access")
                }
            }
            #expect(attempts.withLock { $0 } == 3, "a few times, then the failure is the caller's")

            attempts.withLock { $0 = 0 }
            do {
                try await ledger.run { db throws(PostgresError) in
                    attempts.withLock { $0 += 1 }
                    try db.query("SELEC 1")
                }
                Issue.record("a syntax error passed")
            } catch {
                #expect("\(error)".contains("storage: PostgreSQL: ") && "\(error)".contains("SQLSTATE 42601"), "\(error)")
            }
            #expect(attempts.withLock { $0 } == 1)
            // A connection-class error drops the connection: the job fails fast, the next one reconnects.
            await #expect(throws: StorageError.self) {
                try await ledger.run { _ throws(PostgresError) in throw PostgresError(sqlState: "57P01", message: "terminating connection") }
            }
            #expect(try await ledger.schemaVersion() == PostgresLedger.latestSchemaVersion)
        }
    }

    @Test func anUnreachableServerFailsFastWithoutThePassword() async throws {
        let start = ContinuousClock.now
        do {
            _ = try PostgresLedger(uri: "postgresql://twobits:secret-password-123@127.0.0.1:1/twobits")
            Issue.record("connected to port 1")
        } catch {
            #expect(error.message.hasPrefix("PostgreSQL unreachable: "), "\(error.message)")
            #expect(!error.description.contains("secret-password-123"))
            #expect(!error.description.contains("postgresql://"))
        }
        #expect(ContinuousClock.now - start < .seconds(1))
    }

    @Test func healthSaysWhyWithoutThePasswordWhenTheDatabaseIsGone() async throws {
        guard let store = try PostgresStore.make() else { return }
        let ledger = try PostgresLedger(uri: store.uri)   // not the store's: destroy() must not close it
        defer { ledger.close() }
        _ = try await ledger.schemaVersion()
        store.destroy()   // DROP DATABASE … WITH (FORCE): every session ends, and no new one can start
        let password = try #require(URLComponents(string: store.uri)?.password)
        for _ in 0..<3 {
            let start = ContinuousClock.now
            do {
                try await ledger.checkHealth()
                Issue.record("healthy without a database")
            } catch {
                #expect(error.message.hasPrefix("PostgreSQL unreachable: "), "\(error.message)")
                #expect(!error.description.contains(password) && !error.description.contains("postgresql://"))
            }
            await #expect(throws: StorageError.self) { try await ledger.record(AuditEvent(client: "c", action: "x", result: .ok)) }
            #expect(ContinuousClock.now - start < .seconds(1))
        }
    }

    @Test func terminatedConnectionsAreReplacedWithoutARestart() async throws {
        try await withPostgres { store in
            let ledger = try store.openPostgres(poolSize: 2)
            let other = try store.openPostgres(poolSize: 1)
            #expect(try await ledger.beginIdempotent(client: "c", key: "k", requestHash: "h", owner: "process-x", now: now) == .started)
            // Every session of the ledger ends as at a server restart (57P01 admin shutdown), presence included.
            let admin = try store.connection()
            let killed = try admin.query("""
                SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity
                WHERE datname = current_database() AND application_name = 'twobits' AND pid <> pg_backend_pid()
                """).count
            #expect(killed >= 3)
            // The next calls may fail fast, never hang; within a few seconds both ledgers work again.
            var recovered = false
            let deadline = ContinuousClock.now + .seconds(5)
            while ContinuousClock.now < deadline {
                let start = ContinuousClock.now
                do {
                    _ = try await ledger.record(AuditEvent(client: "c", action: "x", result: .ok))
                    _ = try await other.record(AuditEvent(client: "c", action: "x", result: .ok))
                    recovered = true
                    break
                } catch { #expect(ContinuousClock.now - start < .seconds(1)) }
                try await Task.sleep(for: .milliseconds(100))
            }
            #expect(recovered)
            // The presence lock came back with the presence connection (its idle check runs every second).
            try await Task.sleep(for: .milliseconds(1500))
            #expect(try await other.beginIdempotent(client: "c", key: "k", requestHash: "h", owner: "process-y", now: now) == .inProgress)
        }
    }

    @Test func aSQLiteLedgerIsCopiedWholeAndANonEmptyTargetRefused() async throws {
        try await withPostgres { store in
            let sqliteStore = try SQLiteStore()
            defer { sqliteStore.destroy() }
            let source = try SQLiteLedger(path: sqliteStore.path)
            for i in 0..<5 { try await source.record(AuditEvent(at: .ms(1_000 + Int64(i)), client: "c", action: "custom.\(i)", result: .ok, reason: "r\(i)")) }
            try source.db.execute("DELETE FROM audit_events WHERE action = 'custom.2'")   // a gap in the ids
            try await source.recordWriteIntent(AuditAndIntentContractTests.intent("i-1"))
            try await source.resolveWriteIntent(id: "i-1", result: .unknown, bitsAfter: nil, reason: "timeout", transactionID: nil)
            await #expect(try source.beginIdempotent(client: "c", key: "k", requestHash: "h", owner: "o", now: now) == .started)
            try await source.completeIdempotent(client: "c", key: "k", status: 201, body: Data([0, 0xff, 0x10]))
            await #expect(try source.beginIdempotent(client: "c", key: "open", requestHash: "h", owner: "o", now: now) == .started)
            try await source.order(PendingDeviceAction(installID: "inst", kind: .ban, reason: nil, client: "admin", createdAt: .ms(7)))
            #expect(try await source.rememberDeviceToken(digest: "d", until: now.addingTimeInterval(60), now: now))
            #expect(try await source.consumeTokenID("j", until: now.addingTimeInterval(60), now: now))
            await #expect(try source.addDebugSecret(name: "n", digest: "g", now: .ms(9)))
            try await source.recordKeyActivation(kid: "k1", at: .ms(11))
            #expect(try await source.issueAppAttestChallenge(digest: "ch", until: now.addingTimeInterval(300), now: now))
            var attested = AppAttestContractTests.key("aa-key")
            attested.receipt = Data([0x00, 0xff, 0x7f, 0x80])
            await #expect(try source.storeAppAttestKey(attested))
            await #expect(try source.advanceAppAttestCounter(keyID: "aa-key", to: 3) == .advanced)
            attested.counter = 3

            let tables = try source.exportTables()
            let target = try store.openPostgres()
            let counts = try target.importTables(tables, replacingExisting: false).counts
            #expect(counts == tables.counts)
            #expect(counts["audit_events"] == 6 && counts["write_intents"] == 1 && counts["idempotency_keys"] == 2)
            #expect(try target.tableCounts() == counts)

            #expect(try await target.auditEvents(limit: 100, before: nil) == source.auditEvents(limit: 100, before: nil), "ids kept, every field")
            #expect(try await target.unknownWriteIntents(tokenPrefix: "abcd1234", limit: 10).map(\.id) == ["i-1"])
            #expect(try await target.beginIdempotent(client: "c", key: "k", requestHash: "h", owner: "p", now: now)
                    == .replay(status: 201, body: Data([0, 0xff, 0x10])))
            #expect(try await target.beginIdempotent(client: "c", key: "open", requestHash: "h", owner: "p", now: now) == .unfinished(intent: nil))
            #expect(try await target.pendingAction(installID: "inst")?.kind == .ban)
            #expect(try await target.appAttestKey(id: "aa-key") == attested, "keys copied with counter and receipt bytes")
            #expect(try await target.consumeAppAttestChallenge(digest: "ch", now: now), "a live challenge stays usable")
            #expect(try await target.rememberDeviceToken(digest: "d", until: now.addingTimeInterval(60), now: now) == false)
            #expect(try await target.consumeTokenID("j", until: now.addingTimeInterval(60), now: now) == false)
            #expect(try await target.debugSecretName(digest: "g") == "n")
            #expect(try await target.keyActivations() == ["k1": .ms(11)])
            let maxID = try #require(try await source.auditEvents(limit: 1, before: nil).first?.id)
            #expect(try await target.record(AuditEvent(client: "c", action: "after", result: .ok)) == maxID + 1, "the sequence moved past the copied ids")

            do {
                _ = try target.importTables(tables, replacingExisting: false)
                Issue.record("a non-empty target was overwritten")
            } catch { #expect("\(error)".contains("not empty"), "\(error)") }
            #expect(try target.tableCounts()["audit_events"] == 7, "nothing written by the refused copy")
            #expect(try target.importTables(tables, replacingExisting: true).counts == tables.counts)
        }
    }
}

extension Array {
    func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var result: [T] = []
        for element in self { result.append(try await transform(element)) }
        return result
    }
}
