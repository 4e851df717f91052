import Foundation
import Ledger
import SQLiteLedger
import Testing

/// Opening the SQLite ledger: a path that cannot be opened, a schema newer than this build, and a
/// statement SQLite refuses are named errors, never a silent empty ledger.
@Suite struct LedgerOpeningTests {
    static func directory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-open-" + UUID().uuidString)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    @Test func aPathThatCannotBeOpenedIsNamed() throws {
        let path = "/nonexistent-\(UUID().uuidString)/ledger.sqlite"
        do {
            _ = try SQLiteLedger(path: path)
            Issue.record("opened \(path)")
        } catch {
            #expect(error.description.hasPrefix("storage: SQLite error "))
            #expect(error.description.contains(path))
        }
    }

    @Test func aNewerSchemaIsRefusedAndAFreshLedgerIsMigratedToTheLatest() async throws {
        let dir = try Self.directory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("ledger.sqlite").path
        let ledger = try SQLiteLedger(path: path)
        let latest = ledger.schemaVersion
        #expect(latest > 0)
        // Reopening a migrated ledger keeps its data and version.
        _ = try await ledger.record(AuditEvent(client: "t", action: "ban", result: .ok))
        let again = try SQLiteLedger(path: path)
        #expect(again.schemaVersion == latest)
        #expect(try await again.auditEvents(limit: 10, before: nil).count == 1)

        let raw = try SQLiteConnection(path: path)
        try raw.execute("PRAGMA user_version = \(latest + 1)")
        do {
            _ = try SQLiteLedger(path: path)
            Issue.record("a newer schema was opened")
        } catch {
            #expect(error.description.contains("newer than this build knows"))
        }
    }

    @Test func aRefusedStatementIsAnErrorAndATransactionRollsBack() throws {
        let dir = try Self.directory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let db = try SQLiteConnection(path: dir.appendingPathComponent("t.sqlite").path)
        #expect(throws: SQLiteError.self) { try db.execute("CREATE TABLE") }
        try db.execute("CREATE TABLE t (v INTEGER PRIMARY KEY)")
        #expect(throws: SQLiteError.self) {
            try db.transaction { tx throws(SQLiteError) in
                try tx.query("INSERT INTO t (v) VALUES (?)", [1])
                try tx.query("INSERT INTO t (v) VALUES (?)", [1])   // the primary key refuses the twin
            }
        }
        #expect(try db.query("SELECT count(*) AS n FROM t").first?.int("n") == 0, "the first insert was rolled back")
        #expect(try db.query("SELECT ? AS s", ["text"]).first?.string("s") == "text")
    }
}
