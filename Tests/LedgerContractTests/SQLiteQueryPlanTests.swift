import Foundation
@testable import SQLiteLedger
import Testing

/// Statements that run on every claim must not read a table that grows with the traffic. SQLite's query
/// plan is deterministic for a schema (no `ANALYZE` statistics are kept), so it is asserted, not timed.
@Suite struct SQLiteQueryPlanTests {
    /// The plan's lines (`EXPLAIN QUERY PLAN`'s `detail`) for `sql` on a freshly migrated ledger.
    static func plan(_ sql: String) throws -> [String] {
        let path = NSTemporaryDirectory() + "twobits-plan-\(UUID().uuidString).sqlite"
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        let ledger = try SQLiteLedger(path: path)
        return try ledger.db.query("EXPLAIN QUERY PLAN " + sql).compactMap { $0.string("detail") }
    }

    /// While an unknown intent is unsettled, each resolution asks whether one still is: the question is
    /// answered from the unknown events' index, not by scanning the audit trail (which made the claim at
    /// 50 ms collapse once a run left an unknown intent behind).
    @Test func theUnknownIntentCheckReadsOnlyTheUnknownEvents() throws {
        let details = try Self.plan(UnknownIntents.presence)
        #expect(details.contains { $0.hasPrefix("SCAN a USING INDEX audit_events_unknown") }, "plan: \(details)")
        #expect(!details.contains { $0 == "SCAN a" || $0 == "SCAN audit_events" }, "plan: \(details)")
    }

    /// The once-a-second sweeps of expired rows (device tokens, token ids, App Attest challenges) delete by
    /// the expiry index, not by reading every live row.
    @Test func theExpirySweepsUseTheirIndex() throws {
        for table in ["device_token_uses", "consumed_token_ids", "app_attest_challenges"] {
            let details = try Self.plan(SQLiteLedger.sweep(table))
            #expect(details == ["SEARCH \(table) USING INDEX \(table)_expiry (expires_ms<?)"],
                    "\(table): \(details)")
        }
    }

    /// The once-a-minute gauge of keys without a risk metric counts those keys only, not every attested key.
    @Test func theUnknownMetricCountReadsOnlyTheKeysWithoutAMetric() throws {
        let details = try Self.plan(SQLiteLedger.unknownMetricCount)
        #expect(details == ["SEARCH app_attest_keys USING INDEX app_attest_keys_unknown_metric (first_seen_ms<?)"], "plan: \(details)")
    }
}
