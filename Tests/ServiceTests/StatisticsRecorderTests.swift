import Foundation
import Ledger
@testable import SQLiteLedger
import Testing
@testable import TwoBitsService

/// The overview's counts wait in memory until the ledger takes them: a failed flush loses nothing.
@Suite struct StatisticsRecorderTests {
    @Test func aFailedFlushKeepsItsCountsForTheNext() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("stats-" + UUID().uuidString)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("ledger.sqlite").path
        let ledger: any Ledger = try SQLiteLedger(path: path)
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let recorder = StatisticsRecorder(now: { now })
        recorder.count("claim", "spring", "claimed")
        recorder.appleCall(endpoint: "query_two_bits", outcome: "200", seconds: 0.004)   // ≤ 5 ms: bucket 2

        // The table gone, as a disk error would: the flush fails and keeps what it had.
        let raw = try SQLiteConnection(path: path)
        try raw.execute("ALTER TABLE statistics RENAME TO statistics_away")
        await #expect(throws: StorageError.self) { try await recorder.flush(to: ledger) }
        recorder.count("claim", "spring", "claimed")

        try raw.execute("ALTER TABLE statistics_away RENAME TO statistics")
        try await recorder.flush(to: ledger)
        let hour = StatisticIncrement.hour(of: now)
        let stored = Set(try await ledger.statistics(since: now.addingTimeInterval(-3_600)))
        #expect(stored == [StatisticIncrement(family: "claim", subject: "spring", outcome: "claimed", hour: hour, count: 2),
                           StatisticIncrement(family: "apple", subject: "query_two_bits", outcome: "200", bucket: 2, hour: hour, count: 1)])
        try await recorder.flush(to: ledger)
        #expect(try await ledger.statistics(since: .distantPast).reduce(0) { $0 + $1.count } == 3, "a flush after a flush adds nothing")
        #expect(recorder.dropped == 0)
    }
}
