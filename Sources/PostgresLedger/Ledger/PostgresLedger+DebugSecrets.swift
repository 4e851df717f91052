public import FoundationEssentials
public import Ledger

extension PostgresLedger {
    /// False when the name or the digest is already taken (`INSERT OR IGNORE` on SQLite).
    public func addDebugSecret(name: String, digest: String, now: Date) async throws(StorageError) -> Bool {
        try await run { db throws(PostgresError) -> Bool in
            try !db.query("INSERT INTO debug_secrets (name, digest, created_ms) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING RETURNING 1 AS added",
                          [.text(name), .text(digest), .ms(now)]).isEmpty
        }
    }

    public func debugSecretNames() async throws(StorageError) -> [(name: String, createdAt: Date)] {
        try await run { db throws(PostgresError) in try db.query("SELECT name, created_ms FROM debug_secrets ORDER BY name COLLATE \"C\"") }
            .map { ($0.string("name") ?? "", $0.date("created_ms")) }
    }

    public func deleteDebugSecret(name: String) async throws(StorageError) -> Bool {
        try await run { db throws(PostgresError) -> Bool in
            try !db.query("DELETE FROM debug_secrets WHERE name = $1 RETURNING 1 AS deleted", [.text(name)]).isEmpty
        }
    }

    public func debugSecretName(digest: String) async throws(StorageError) -> String? {
        try await run { db throws(PostgresError) in try db.query("SELECT name FROM debug_secrets WHERE digest = $1", [.text(digest)]) }
            .first?.string("name")
    }
}
