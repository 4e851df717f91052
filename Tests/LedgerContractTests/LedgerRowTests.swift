import Foundation
import Ledger
@testable import PostgresLedger
import SQLiteLedger
import Testing

/// Records are mapped from rows once for both ledgers (`LedgerRow`): NULL reads as nil, and a column the row
/// lacks throws instead of reading as a default.
@Suite struct LedgerRowTests {
    @Test func aSQLiteRowWithoutAColumnTheMappingReadsThrows() throws {
        let db = try SQLiteConnection(path: ":memory:")
        let full = try #require(try db.query("SELECT 'i' AS install_id, 'ban' AS kind, NULL AS reason, 'ops' AS client, 1500 AS created_ms").first)
        let order = try PendingDeviceAction(row: full)
        #expect(order == PendingDeviceAction(installID: "i", kind: .ban, reason: nil, client: "ops", createdAt: Date(timeIntervalSince1970: 1.5)))
        let partial = try #require(try db.query("SELECT 'i' AS install_id, 'ban' AS kind, 'ops' AS client, 1500 AS created_ms").first)
        #expect(throws: StorageError.self) { try PendingDeviceAction(row: partial) }
    }

    @Test func aPostgresRowWithoutAColumnTheMappingReadsThrows() throws {
        let columns = ["install_id", "kind", "reason", "client", "created_ms"]
        let full = PostgresRow(columns: columns, values: [.text("i"), .text("unban"), .null, .text("ops"), .integer(1500)])
        #expect(try PendingDeviceAction(row: full) == PendingDeviceAction(installID: "i", kind: .unban, reason: nil, client: "ops",
                                                                          createdAt: Date(timeIntervalSince1970: 1.5)))
        let partial = PostgresRow(columns: Array(columns.dropLast()), values: [.text("i"), .text("unban"), .null, .text("ops")])
        #expect(throws: StorageError.self) { try PendingDeviceAction(row: partial) }
    }
}
