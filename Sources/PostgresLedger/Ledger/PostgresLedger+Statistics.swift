public import FoundationEssentials
public import Ledger

extension PostgresLedger {
    /// Replicas add to the same counters: the upsert adds, so no increment of any of them is lost.
    public func addStatistics(_ increments: [StatisticIncrement], forgetBefore: Date) async throws(StorageError) {
        try await run { db throws(PostgresError) in
            try db.transaction { db throws(PostgresError) in
                for i in increments {
                    try db.query("""
                        INSERT INTO statistics (hour, family, subject, outcome, bucket, count) VALUES ($1, $2, $3, $4, $5, $6)
                        ON CONFLICT (hour, family, subject, outcome, bucket) DO UPDATE SET count = statistics.count + excluded.count
                        """, [.integer(i.hour), .text(i.family), .text(i.subject), .text(i.outcome), .int(i.bucket), .integer(i.count)])
                }
                try db.query("DELETE FROM statistics WHERE hour < $1", [.integer(StatisticIncrement.hour(of: forgetBefore))])
            }
        }
    }

    public func statistics(since: Date) async throws(StorageError) -> [StatisticIncrement] {
        let rows = try await run { db throws(PostgresError) in
            try db.query("SELECT hour, family, subject, outcome, bucket, count FROM statistics WHERE hour >= $1 ORDER BY hour",
                         [.integer(StatisticIncrement.hour(of: since))])
        }
        return try rows.records(StatisticIncrement.init(row:))
    }
}
