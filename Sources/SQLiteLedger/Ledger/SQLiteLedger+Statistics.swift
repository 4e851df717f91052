public import FoundationEssentials
public import Ledger

extension SQLiteLedger {
    public func addStatistics(_ increments: [StatisticIncrement], forgetBefore: Date) async throws(StorageError) {
        try await run { (db) throws(SQLiteError) in
            try db.transaction { tx throws(SQLiteError) in
                for i in increments {
                    try tx.query("""
                        INSERT INTO statistics (hour, family, subject, outcome, bucket, count) VALUES (?, ?, ?, ?, ?, ?)
                        ON CONFLICT(hour, family, subject, outcome, bucket) DO UPDATE SET count = count + excluded.count
                        """, [.integer(i.hour), .text(i.family), .text(i.subject), .text(i.outcome), .integer(Int64(i.bucket)), .integer(i.count)])
                }
                try tx.query("DELETE FROM statistics WHERE hour < ?", [.integer(StatisticIncrement.hour(of: forgetBefore))])
            }
        }
    }

    public func statistics(since: Date) async throws(StorageError) -> [StatisticIncrement] {
        try await run { (db) throws(SQLiteError) in
            try db.query("SELECT hour, family, subject, outcome, bucket, count FROM statistics WHERE hour >= ? ORDER BY hour",
                         [.integer(StatisticIncrement.hour(of: since))])
        }.records(StatisticIncrement.init(row:))
    }
}
