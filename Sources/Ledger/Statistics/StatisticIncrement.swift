public import FoundationEssentials

/// One hourly counter of the figures the admin console's overview shows (claims, tokens, Apple calls),
/// added to by every process sharing the ledger, so the figures survive restarts and cover every replica.
public struct StatisticIncrement: Sendable, Hashable {
    /// What is counted: `claim`, `token`, `apple` or `app_attest_fallback` (`StatisticsRecorder` writes them,
    /// `OverviewReport` reads them). Any name: the table is keyed by it, so a new family needs no migration.
    public var family: String
    /// The promotion, the tier or the Apple endpoint.
    public var subject: String
    /// `claimed`, `issued`, an error code or an Apple outcome.
    public var outcome: String
    /// For latencies, the index of the histogram bucket; 0 otherwise, -1 for an event without a latency.
    public var bucket: Int
    /// The start of the UTC hour, in whole seconds since 1970.
    public var hour: Int64
    public var count: Int64

    public init(family: String, subject: String, outcome: String, bucket: Int = 0, hour: Int64, count: Int64) {
        self.family = family
        self.subject = subject
        self.outcome = outcome
        self.bucket = bucket
        self.hour = hour
        self.count = count
    }

    /// The start of the UTC hour holding `date`.
    public static func hour(of date: Date) -> Int64 {
        let seconds = Int64(date.timeIntervalSince1970.rounded(.down))
        return seconds - ((seconds % 3600) + 3600) % 3600
    }
}
