import DeviceDomain
import Foundation
import Ledger
@testable import PostgresLedger
import SQLiteLedger
import Testing

/// The domain's values are parsed once, where a row becomes a record: a stored value that does not parse (a row
/// another tool or a hand edit wrote) is a `StorageError` naming the column, never a default or a guess.
@Suite("Ledger contract: stored domain values")
struct StoredDomainValueContractTests {
    /// Runs `sql` on the store's database beside the ledger (the SQLite file itself, or PostgreSQL's database).
    static func corrupt(_ store: LedgerStore, _ sql: String) throws {
        if let sqlite = store as? SQLiteStore {
            try SQLiteConnection(path: sqlite.path).execute(sql)
        } else if let postgres = store as? PostgresStore {
            _ = try postgres.connection().execute(sql)
        }
    }

    @Test(arguments: Backend.all, ["bits = '(1,2)'", "bits = '(1,0)@2026-11'", "month = '2026-13'", "month = '11/2026'"])
    func anUnparseableIntentIsAStorageError(_ backend: Backend, _ assignment: String) async throws {
        try await withStore(backend) { store in
            let ledger = try store.open()
            try await ledger.recordWriteIntent(AuditAndIntentContractTests.intent("i-1"))
            try await ledger.resolveWriteIntent(id: "i-1", result: .unknown, bitsAfter: nil, reason: "timeout", transactionID: nil)
            let read = try #require(try await ledger.unknownWriteIntents(tokenPrefix: "abcd1234", limit: 10).first)
            #expect(read.bits == Bits(bit0: true, bit1: false) && read.month == YearMonth(year: 2026, month: 11))

            try Self.corrupt(store, "UPDATE write_intents SET \(assignment)")
            let column = String(assignment.prefix { $0 != " " })
            await #expect { _ = try await ledger.unknownWriteIntents(tokenPrefix: "abcd1234", limit: 10) } throws: { error in
                "\(error)".contains("the ledger's \(column) holds")
            }
        }
    }

    @Test(arguments: Backend.all)
    func aKeyOfAnUnknownEnvironmentIsAStorageError(_ backend: Backend) async throws {
        try await withStore(backend) { store in
            let ledger = try store.open()
            let key = AppAttestContractTests.key("a2V5LWE=")
            #expect(try await ledger.storeAppAttestKey(key))
            #expect(try await ledger.appAttestKey(id: key.keyID)?.environment == .production)

            try Self.corrupt(store, "UPDATE app_attest_keys SET environment = 'staging'")
            await #expect { _ = try await ledger.appAttestKey(id: key.keyID) } throws: { error in
                "\(error)" == #"storage: the ledger's environment holds "staging", not an environment"#
            }
        }
    }
}
