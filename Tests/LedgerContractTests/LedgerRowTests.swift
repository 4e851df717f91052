import DeviceDomain
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

    /// A NULL where the schema never stores one (a row another tool wrote, a copy) reads as the field's empty
    /// value, never as a crash: the audit trail and the statistics stay listable. A write intent without
    /// `success_result` (recorded before the column was used) settles as `ok`. A domain value has no empty value:
    /// a NULL environment, bits or month is a `StorageError` (StoredDomainValueContractTests: one that does not parse).
    @Test func nullColumnsReadAsEmptyValues() throws {
        let db = try SQLiteConnection(path: ":memory:")
        let epoch = Date(timeIntervalSince1970: 0)
        let key = try #require(try db.query("""
            SELECT NULL AS key_id, NULL AS public_key, NULL AS counter, NULL AS receipt, NULL AS environment, NULL AS app_id,
                   NULL AS validation_category, NULL AS first_seen_ms, NULL AS revoked_ms, NULL AS revoked_reason, NULL AS risk_metric
            """).first)
        #expect(throws: StorageError.self) { try AppAttestKeyRecord(row: key) }
        let keyWithEnvironment = try #require(try db.query("""
            SELECT NULL AS key_id, NULL AS public_key, NULL AS counter, NULL AS receipt, 'development' AS environment, NULL AS app_id,
                   NULL AS validation_category, NULL AS first_seen_ms, NULL AS revoked_ms, NULL AS revoked_reason, NULL AS risk_metric
            """).first)
        #expect(try AppAttestKeyRecord(row: keyWithEnvironment) == AppAttestKeyRecord(keyID: "", publicKey: Data(), counter: 0, receipt: Data(),
                                                                                       environment: .development, appID: "", validationCategory: nil,
                                                                                       firstSeen: epoch))

        let eventColumns = "NULL AS id, NULL AS at_ms, NULL AS client, NULL AS action, NULL AS subject, NULL AS bits_before, NULL AS bits_after, "
            + "NULL AS result, NULL AS reason, NULL AS transaction_id, NULL AS token_prefix, NULL AS intent_id"
        let emptyEvent = AuditEvent(id: 0, at: epoch, client: "", action: "", result: AuditResult(rawValue: ""))
        let event = try #require(try db.query("SELECT " + eventColumns).first)
        #expect(try AuditEvent(row: event) == emptyEvent)

        let nullIntent = try #require(try db.query("SELECT \(eventColumns), NULL AS intent_token_prefix, NULL AS bits, NULL AS month, NULL AS success_result").first)
        #expect(throws: StorageError.self) { try WriteIntent(row: nullIntent) }
        let intent = try #require(try db.query("SELECT \(eventColumns), NULL AS intent_token_prefix, '(0,1)' AS bits, '2026-11' AS month, NULL AS success_result").first)
        let read = try WriteIntent(row: intent)
        #expect(read == WriteIntent(id: "", tokenPrefix: "", bits: Bits(bit0: false, bit1: true), month: YearMonth(year: 2026, month: 11)!, successResult: .ok,
                                    event: emptyEvent))
        #expect(AuditResultContractTests.caseName(read.successResult) == "ok")

        let statistic = try #require(try db.query("SELECT NULL AS family, NULL AS subject, NULL AS outcome, NULL AS bucket, NULL AS hour, NULL AS count").first)
        #expect(try StatisticIncrement(row: statistic) == StatisticIncrement(family: "", subject: "", outcome: "", bucket: 0, hour: 0, count: 0))

        // An order without a client or a time is kept; one without an install id or of an unknown kind is skipped.
        let order = try #require(try db.query("SELECT 'i' AS install_id, 'ban' AS kind, NULL AS reason, NULL AS client, NULL AS created_ms").first)
        #expect(try PendingDeviceAction(row: order) == PendingDeviceAction(installID: "i", kind: .ban, reason: nil, client: "", createdAt: epoch))
        let unknownKind = try #require(try db.query("SELECT 'i' AS install_id, 'quarantine' AS kind, NULL AS reason, 'ops' AS client, 1 AS created_ms").first)
        #expect(try PendingDeviceAction(row: unknownKind) == nil)
    }

    /// Results are equal, and hash equal, when stored equal (a `Set` of results is a set of stored texts), and print
    /// as their stored text (log lines and messages interpolate them).
    @Test func resultsHashAndPrintAsTheirStoredText() {
        let results: Set<AuditResult> = [.ok, AuditResult(rawValue: "ok"), .unrecognized("ok"), .failed, .unrecognized("superseded")]
        #expect(results.count == 3)
        #expect(results.contains(.unrecognized("failed")))
        #expect("\(AuditResult.failed) \(AuditResult.unrecognized("superseded"))" == "failed superseded")
    }
}
