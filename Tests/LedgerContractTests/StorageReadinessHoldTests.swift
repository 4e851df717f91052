import Ledger
import Locking
@testable import PostgresLedger
import Testing

/// `HealthVerdictCache`: a real write's storage failure makes storage not ready at once (the probe alone
/// said ready on a full disk), for a hold that a failure soon after a recovery doubles, so that a lying
/// probe cannot make an instance flap in and out of its load balancer. A clock the test moves.
@Suite struct StorageReadinessHoldTests {
    final class TestClock: Sendable {
        private let instant = Lock(ContinuousClock.now)
        var now: ContinuousClock.Instant { instant.withLock { $0 } }
        func advance(_ d: Duration) { instant.withLock { $0 += d } }
    }

    let clock = TestClock()
    let full = StorageError("database or disk is full")

    func cache() -> HealthVerdictCache {
        let clock = self.clock
        return HealthVerdictCache(interval: .seconds(2), baseHold: .seconds(5), maxHold: .seconds(80), calmAfter: .seconds(300), now: { clock.now })
    }

    /// What `/readyz` would say now: ready (probe cached), not ready (thrown), or a probe is due (which succeeds here).
    func verdict(_ cache: HealthVerdictCache) -> String {
        do {
            if try cache.recent() { return "ready" }
            try cache.remember(nil, at: clock.now)
            return "probed ready"
        } catch {
            return "not ready"
        }
    }

    @Test func aRealWriteFailureOverridesAProbeThatSaidReadyUntilItsHoldIsOver() throws {
        let c = cache()
        try c.remember(nil, at: clock.now)
        #expect(verdict(c) == "ready")
        c.realWriteFailed(full)
        #expect(verdict(c) == "not ready", "the cached probe said ready; the real write says otherwise")
        clock.advance(.milliseconds(4_900))
        #expect(verdict(c) == "not ready")
        clock.advance(.milliseconds(100))
        #expect(verdict(c) == "probed ready", "after the hold a fresh probe decides")
        #expect(verdict(c) == "ready")
    }

    @Test func sustainedFailuresKeepItNotReady() {
        let c = cache()
        for _ in 0..<20 {
            c.realWriteFailed(full)
            clock.advance(.seconds(4))
            #expect(verdict(c) == "not ready")
        }
    }

    @Test func aProbeThatStartedWithinTheHoldDoesNotEndIt() throws {
        let c = cache()
        c.realWriteFailed(full)
        let probeStarted = clock.now
        clock.advance(.seconds(6))
        try c.remember(nil, at: probeStarted)
        clock.advance(.seconds(-2))
        #expect(verdict(c) == "not ready")
    }

    @Test func failuresSoonAfterARecoveryDoubleTheHoldUpToItsCeilingAndACalmResetsIt() {
        let c = cache()
        var expected: [Duration] = []
        var held: [Duration] = []
        for episode in 0..<6 {
            c.realWriteFailed(full)
            var waited = Duration.zero
            while verdict(c) == "not ready" {
                clock.advance(.seconds(1))
                waited += .seconds(1)
            }
            held.append(waited)
            expected.append(min(.seconds(5) * (1 << episode), .seconds(80)))
            clock.advance(.seconds(10))
        }
        #expect(held == expected)
        clock.advance(.seconds(301))
        c.realWriteFailed(full)
        clock.advance(.seconds(5))
        #expect(verdict(c) == "probed ready", "after five calm minutes the hold is back to 5 s")
    }

    /// The same on PostgreSQL, through the real pool: a trigger refuses audit rows as a full disk would
    /// (SQLSTATE 53100) while the probe's table still takes its upsert. A statement's own failure (here
    /// P0001) leaves storage ready.
    @Test func aPostgreSQLWriteRefusedForWantOfDiskMakesStorageNotReadyAlthoughTheProbeStillWrites() async throws {
        try await withPostgres { store in
            let ledger = try store.openPostgres()
            try await ledger.checkHealth()
            let db = try store.connection()
            _ = try db.execute("""
                CREATE FUNCTION refuse_audit() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN
                    IF NEW.client = 'full' THEN RAISE EXCEPTION 'could not extend file' USING ERRCODE = 'disk_full'; END IF;
                    RAISE EXCEPTION 'refused by a trigger';
                END $$;
                CREATE TRIGGER refuse_audit BEFORE INSERT ON audit_events FOR EACH ROW EXECUTE FUNCTION refuse_audit();
                """)
            do throws(StorageError) {
                _ = try await ledger.record(AuditEvent(client: "other", action: "x", result: .ok))
                Issue.record("the trigger let the row in")
            } catch {
                #expect(!error.storeFault, "\(error)")
            }
            try await ledger.checkHealth()
            do throws(StorageError) {
                _ = try await ledger.record(AuditEvent(client: "full", action: "x", result: .ok))
                Issue.record("the trigger let the row in")
            } catch {
                #expect(error.storeFault, "\(error)")
            }
            await #expect(throws: StorageError.self, "the probe's upsert succeeds, the real write did not") { try await ledger.checkHealth() }
        }
    }
}
