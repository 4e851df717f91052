import Foundation
import Ledger
import Testing

/// The overview's hourly counters: increments add up (across processes sharing the ledger), are read back
/// from an hour on, and hours past the retention are forgotten.
@Suite("Ledger contract: statistics")
struct StatisticsContractTests {
    let now = Date.ms(1_800_000_000_000)

    func claim(_ outcome: String, hour: Int64, count: Int64) -> StatisticIncrement {
        StatisticIncrement(family: "claim", subject: "spring", outcome: outcome, hour: hour, count: count)
    }

    @Test(arguments: Backend.all)
    func incrementsAddUpAcrossProcessesAndOldHoursAreForgotten(_ backend: Backend) async throws {
        try await withStore(backend) { store in
            let first = try store.open()
            let second = try store.open()
            let hour = StatisticIncrement.hour(of: now)
            let apple = StatisticIncrement(family: "apple", subject: "query_two_bits", outcome: "200", bucket: 5, hour: hour, count: 2)
            try await first.addStatistics([claim("claimed", hour: hour, count: 3), apple, claim("claimed", hour: hour - 7_200, count: 1)],
                                          forgetBefore: now.addingTimeInterval(-86_400))
            try await second.addStatistics([claim("claimed", hour: hour, count: 4), claim("already_claimed", hour: hour, count: 1)],
                                           forgetBefore: now.addingTimeInterval(-86_400))
            let read = Set(try await first.statistics(since: now.addingTimeInterval(-3_600)))
            #expect(read == [claim("claimed", hour: hour, count: 7), claim("already_claimed", hour: hour, count: 1), apple])
            #expect(try await second.statistics(since: now.addingTimeInterval(-86_400)).count == 4, "the older hour is read from its time on")

            // Forgetting keeps the hour holding `forgetBefore` and drops the ones before it.
            try await second.addStatistics([], forgetBefore: now.addingTimeInterval(-3_600))
            let kept = try await first.statistics(since: .distantPast)
            #expect(kept.count == 3 && kept.allSatisfy { $0.hour == hour }, "\(kept)")
            first.close()
            second.close()
        }
    }

    @Test func hoursStartOnTheUTCHour() {
        #expect(StatisticIncrement.hour(of: Date(timeIntervalSince1970: 7_199.9)) == 3_600)
        #expect(StatisticIncrement.hour(of: Date(timeIntervalSince1970: 7_200)) == 7_200)
        #expect(StatisticIncrement.hour(of: Date(timeIntervalSince1970: -1)) == -3_600)
    }
}
