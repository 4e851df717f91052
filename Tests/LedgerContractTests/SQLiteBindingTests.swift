import Foundation
@testable import SQLiteLedger
import Testing

/// `SQLiteConnection` lends bound strings and blobs to SQLite uncopied (SQLITE_STATIC): every kind of value
/// must come back exactly as bound, and a statement whose binding failed half-way must not keep pointers to
/// bytes it no longer has.
@Suite struct SQLiteBindingTests {
    static func connection() throws -> SQLiteConnection {
        try SQLiteConnection(path: NSTemporaryDirectory() + "twobits-binding-\(UUID().uuidString).sqlite")
    }

    /// Small strings (held inline by Swift, lent from a temporary copy), long ones, non-ASCII, an empty
    /// blob and a large one, all in one statement, written and read back.
    @Test func everyKindOfValueComesBackAsBound() throws {
        let db = try Self.connection()
        try db.query("CREATE TABLE t (a, b, c, d, e, f, g, h)")
        let long = String(repeating: "x", count: 3_000) + "é"
        let values: [SQLiteValue] = [.text("short"), .text(long), .text("Ünïcødé ✓"), .blob(Data()),
                                     .blob(Data((0..<5_000).map { UInt8(truncatingIfNeeded: $0) })), .integer(-7), .real(2.5), .null]
        for _ in 0..<3 { try db.query("INSERT INTO t VALUES (?, ?, ?, ?, ?, ?, ?, ?)", values) }
        let rows = try db.query("SELECT * FROM t")
        #expect(rows.count == 3)
        for row in rows {
            #expect(row.string("a") == "short")
            #expect(row.string("b") == long)
            #expect(row.string("c") == "Ünïcødé ✓")
            #expect(row.values["d"] == .blob(Data()))
            #expect(row.blob("e") == Data((0..<5_000).map { UInt8(truncatingIfNeeded: $0) }))
            #expect(row.values["f"] == .integer(-7) && row.values["g"] == .real(2.5) && row.values["h"] == .null)
        }
        // Lookups bound the same way find what was written.
        #expect(try db.query("SELECT count(*) AS n FROM t WHERE b = ? AND a = ?", [.text(long), .text("short")]).first?.int("n") == 3)
    }

    /// One value too many fails on its bind, after the first two were bound: the cached statement must come
    /// back with nothing bound, not with pointers to the earlier call's bytes.
    @Test func aFailedBindLeavesTheStatementClean() throws {
        let db = try Self.connection()
        let sql = "SELECT ?1 AS first, ?2 AS second"
        #expect(throws: SQLiteError.self) {
            try db.query(sql, [.text("left-behind-" + String(repeating: "a", count: 40)), .text("b"), .text("one too many")])
        }
        let row = try #require(try db.query(sql).first)
        #expect(row.values["first"] == .null)
        #expect(row.values["second"] == .null)
        #expect(try db.query(sql, [.text("again"), .integer(2)]).first?.values == ["first": .text("again"), "second": .integer(2)])
    }
}
