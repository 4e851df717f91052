import Foundation
import Ledger
@testable import PostgresLedger
@testable import SQLiteLedger
import Testing

/// `twobits ledger copy` moves values exactly or not at all: what SQLite holds that PostgreSQL cannot hold as it
/// is (or that no ledger column holds) is refused naming table, column and row, with the target left as it was;
/// and the values read back from the target are compared with the source's, not only the counts.
@Suite("Ledger copy exactness", .serialized)
struct LedgerCopyExactnessTests {
    /// A SQLite ledger with three audit events (ids 1-3) and one statistics row.
    static func source(_ store: SQLiteStore) async throws -> SQLiteLedger {
        let ledger = try SQLiteLedger(path: store.path)
        for i in 0..<3 { try await ledger.record(AuditEvent(at: .ms(1_000 + Int64(i)), client: "c", action: "custom.\(i)", result: .ok, reason: "r\(i)")) }
        try ledger.db.execute("INSERT INTO statistics (hour, family, subject, outcome, bucket, count) VALUES (1, 'f', 's', 'o', 0, 1)")
        return ledger
    }

    @Test(arguments: [
        ("UPDATE audit_events SET at_ms = 1e300 WHERE id = 2", "column at_ms, rowid 2", "REAL"),
        ("UPDATE audit_events SET reason = 'a' || char(0) || 'b' WHERE id = 3", "column reason, rowid 3", "NUL"),
        ("UPDATE audit_events SET reason = X'FF00' WHERE id = 1", "column reason, rowid 1", "blob"),
        ("UPDATE audit_events SET reason = CAST(X'C328' AS TEXT) WHERE id = 2", "column reason, rowid 2", "UTF-8"),
        ("UPDATE statistics SET bucket = 5000000000", "column bucket, rowid 1", "INTEGER range"),
    ])
    func aValueThatCannotBeCopiedExactlyIsRefusedAndTheTargetKeptAsItWas(sql: String, names: String, problem: String) async throws {
        try await withPostgres { store in
            let sqliteStore = try SQLiteStore()
            defer { sqliteStore.destroy() }
            let source = try await Self.source(sqliteStore)
            let target = try store.openPostgres()
            let clean = try source.exportTables()
            #expect(try target.importTables(clean, replacingExisting: false).counts == clean.counts)
            let before = try await target.auditEvents(limit: 10, before: nil)

            try source.db.execute(sql)
            do {
                _ = try target.importTables(try source.exportTables(), replacingExisting: true)
                Issue.record("\(sql) was copied")
            } catch {
                let message = "\(error)"
                let table = sql.contains("statistics") ? "statistics" : "audit_events"
                #expect(message.contains("table \(table), \(names)") && message.contains(problem), "\(message)")
            }
            #expect(try target.tableCounts() == clean.counts, "the target keeps what it had")
            #expect(try await target.auditEvents(limit: 10, before: nil) == before)
        }
    }

    @Test func aTargetThatChangesAValueOnTheWayFailsTheCopyAndKeepsNothing() async throws {
        try await withPostgres { store in
            let sqliteStore = try SQLiteStore()
            defer { sqliteStore.destroy() }
            let source = try await Self.source(sqliteStore)
            let target = try store.openPostgres()
            // Counts still match: only the values tell.
            let raw = try store.connection()
            try raw.execute("""
                CREATE FUNCTION twist() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN NEW.reason := upper(NEW.reason); RETURN NEW; END $$;
                CREATE TRIGGER twist BEFORE INSERT ON audit_events FOR EACH ROW EXECUTE FUNCTION twist()
                """)
            do {
                _ = try target.importTables(try source.exportTables(), replacingExisting: false)
                Issue.record("a copy whose values changed was accepted")
            } catch {
                #expect("\(error)".contains("table audit_events") && "\(error)".contains("3 of 3 rows"), "\(error)")
            }
            #expect(try target.tableCounts().values.allSatisfy { $0 == 0 }, "rolled back whole")
        }
    }

    @Test func theCanonicalFormTellsTypesAndBytesApartButNotRowOrder() {
        func table(_ rows: [[LedgerTables.Cell]], columns: [String] = ["a"]) -> LedgerTables.Table {
            LedgerTables.Table(name: "t", columns: columns, rows: rows)
        }
        let text = table([[.text("a\u{0}b")]])
        #expect(text.canonicalForm != table([[.text("a")]]).canonicalForm)
        #expect(table([[.text("1")]]).canonicalForm != table([[.integer(1)]]).canonicalForm)
        #expect(table([[.text("ab")]]).canonicalForm != table([[.blob(Data("ab".utf8))]]).canonicalForm)
        #expect(table([[.null]]).canonicalForm != table([[.text("")]]).canonicalForm)
        #expect(table([[.integer(1)], [.integer(2)]]).canonicalForm == table([[.integer(2)], [.integer(1)]]).canonicalForm)
        #expect(table([[.integer(1)]]).canonicalForm != table([[.integer(1)]], columns: ["b"]).canonicalForm)
        #expect(table([[.integer(1)], [.integer(2)]]).rowsMissing(from: table([[.integer(2)], [.integer(3)]])) == 1)
    }
}
