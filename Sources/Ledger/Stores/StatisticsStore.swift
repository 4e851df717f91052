public import FoundationEssentials

/// Figures for the admin console's overview: hourly counters, added to by every process.
public protocol StatisticsStore: Sendable {
    /// Adds each increment's count to its hourly counter, and forgets counters of hours before `forgetBefore`,
    /// in one transaction.
    func addStatistics(_ increments: [StatisticIncrement], forgetBefore: Date) async throws(StorageError)
    /// Every counter of the hours from `since` on (summed over the processes that added to them).
    func statistics(since: Date) async throws(StorageError) -> [StatisticIncrement]
}
