import Foundation
import Ledger
import SQLiteLedger
import Testing

/// The ledger's write-ahead log reaches the database file through the background checkpointer, never
/// through a checkpoint inside a caller's commit (docs/architecture.md, "Where ledger calls run").
@Suite struct CheckpointTests {
    static let pageSize = 4096

    /// Writes `rows` audit events of about one page each.
    static func fill(_ ledger: SQLiteLedger, rows: Int) async throws {
        for i in 0..<rows {
            try await ledger.record(AuditEvent(client: "t", action: .ban, subject: "row-\(i)", result: .ok,
                                         reason: String(repeating: "x", count: 3_000)))
        }
    }

    /// The size of the database file itself (not its log), polled until it holds `pages` or 10 s pass.
    static func waitForDatabase(_ path: String, pages: Int) async throws -> Int {
        var size = 0
        for _ in 0..<200 {
            size = (try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
            if size >= pages * pageSize { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        return size
    }

    @Test func aShortLogIsCheckpointedByTheThreadWithinItsInterval() async throws {
        let dir = try LedgerOpeningTests.directory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("ledger.sqlite").path
        let ledger = try SQLiteLedger(path: path, checkpointInterval: .milliseconds(50))
        // 100 rows of a page each, a few hundred log pages: below the 1000 at which SQLite (or a commit) would checkpoint.
        try await Self.fill(ledger, rows: 100)
        #expect(try await Self.waitForDatabase(path, pages: 100) >= 100 * Self.pageSize)
        #expect(try await ledger.auditEvents(limit: 1_000, before: nil).count == 100)
    }

    @Test func aLongLogWakesTheThreadBeforeItsInterval() async throws {
        let dir = try LedgerOpeningTests.directory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("ledger.sqlite").path
        let ledger = try SQLiteLedger(path: path, checkpointInterval: .seconds(3_600))
        try await Self.fill(ledger, rows: 1_200)
        #expect(try await Self.waitForDatabase(path, pages: 1_000) >= 1_000 * Self.pageSize)
    }

    @Test func withoutTheThreadAShortLogStaysInTheLog() async throws {
        // The control for the first test: nothing else moves those rows into the database file.
        let dir = try LedgerOpeningTests.directory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("ledger.sqlite").path
        let ledger = try SQLiteLedger(path: path, checkpointInterval: nil)
        try await Self.fill(ledger, rows: 100)
        try await Task.sleep(for: .milliseconds(300))
        let size = (try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
        #expect(size < 50 * Self.pageSize)
    }
}
