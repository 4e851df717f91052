import Foundation
import Ledger
@testable import PostgresLedger
import SQLiteLedger
import Testing

/// A ledger implementation the contract runs against.
struct Backend: Sendable, CustomTestStringConvertible {
    enum Kind: Sendable { case sqlite, postgres }
    let kind: Kind

    static let sqlite = Backend(kind: .sqlite)
    static let postgres = Backend(kind: .postgres)
    static let all: [Backend] = [.sqlite, .postgres]

    var testDescription: String { kind == .sqlite ? "SQLite" : "PostgreSQL" }

    /// A fresh, empty store of this kind; nil when PostgreSQL is not configured and not required (then
    /// the case passes without running). With TWOBITS_REQUIRE_POSTGRES=1 a missing server fails the case.
    func makeStore() throws -> LedgerStore? {
        switch kind {
        case .sqlite: return try SQLiteStore()
        case .postgres: return try PostgresStore.make()
        }
    }
}

/// One empty database for one test case; `open` gives a ledger on it (several may be open at once:
/// replicas), `reopen` stands for a restart.
protocol LedgerStore: AnyObject {
    func open() throws -> any Ledger
    /// The ledger is gone, as if its process stopped (PostgreSQL: its connections and locks released).
    func stop(_ ledger: any Ledger)
    func destroy()
}

final class SQLiteStore: LedgerStore {
    let directory: URL
    var path: String { directory.appendingPathComponent("ledger.sqlite").path }

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-contract-" + UUID().uuidString)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    func open() throws -> any Ledger { try SQLiteLedger(path: path) }
    func stop(_ ledger: any Ledger) {}
    func destroy() { try? FileManager.default.removeItem(at: directory) }
}

final class PostgresStore: LedgerStore {
    let admin: String
    let name: String
    let uri: String
    private var opened: [PostgresLedger] = []

    /// The server of TWOBITS_TEST_POSTGRES, or nil (skip) / an error (TWOBITS_REQUIRE_POSTGRES=1).
    static func serverURI() throws -> String? {
        let env = ProcessInfo.processInfo.environment
        if let uri = env["TWOBITS_TEST_POSTGRES"], !uri.isEmpty { return uri }
        if env["TWOBITS_REQUIRE_POSTGRES"] == "1" { throw StorageError("TWOBITS_REQUIRE_POSTGRES=1 but TWOBITS_TEST_POSTGRES is not set") }
        return nil
    }

    static func make() throws -> PostgresStore? {
        guard let admin = try serverURI() else { return nil }
        return try PostgresStore(admin: admin)
    }

    /// Creates database `t_<random>` on the server of `admin` (a role with CREATEDB).
    init(admin: String) throws {
        self.admin = admin
        name = "t_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        let db = try PostgresConnection(uri: admin)
        try db.execute("CREATE DATABASE \(name)")
        var components = try #require(URLComponents(string: admin))
        components.path = "/" + name
        uri = try #require(components.string)
    }

    func open() throws -> any Ledger { try openPostgres() }

    func openPostgres(poolSize: Int = 4, pipelineConnections: Int = 2, poolWait: Duration = .seconds(2)) throws -> PostgresLedger {
        let ledger = try PostgresLedger(uri: uri, poolSize: poolSize, pipelineConnections: pipelineConnections, poolWait: poolWait)
        opened.append(ledger)
        return ledger
    }

    func stop(_ ledger: any Ledger) { (ledger as? PostgresLedger)?.close() }

    /// A raw connection to the test database, for what the ledger API does not do.
    func connection() throws -> PostgresConnection { try PostgresConnection(uri: uri) }

    func destroy() {
        opened.forEach { $0.close() }
        if let db = try? PostgresConnection(uri: admin) { _ = try? db.execute("DROP DATABASE IF EXISTS \(name) WITH (FORCE)") }
    }
}

/// Runs `body` with a fresh store of `backend` (skipped when PostgreSQL is not configured), destroying it after.
func withStore(_ backend: Backend, _ body: (LedgerStore) async throws -> Void) async throws {
    guard let store = try backend.makeStore() else { return }
    defer { store.destroy() }
    try await body(store)
}

/// Runs `body` with a fresh PostgreSQL store (skipped when PostgreSQL is not configured).
func withPostgres(_ body: (PostgresStore) async throws -> Void) async throws {
    guard let store = try PostgresStore.make() else { return }
    defer { store.destroy() }
    try await body(store)
}

extension Date {
    /// Milliseconds, as the ledgers store time.
    static func ms(_ ms: Int64) -> Date { Date(timeIntervalSince1970: Double(ms) / 1000) }
}
