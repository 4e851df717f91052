public import FoundationEssentials
public import Ledger

extension PostgresLedger {
    /// The latest activation time is kept, whichever replica records it.
    public func recordKeyActivation(kid: String, at: Date) async throws(StorageError) {
        try await run { db throws(PostgresError) in
            try db.query("""
                INSERT INTO key_activations (kid, activated_ms) VALUES ($1, $2)
                ON CONFLICT (kid) DO UPDATE SET activated_ms = GREATEST(key_activations.activated_ms, excluded.activated_ms)
                """, [.text(kid), .ms(at)])
        }
    }

    public func keyActivations() async throws(StorageError) -> [String: Date] {
        let rows = try await run { db throws(PostgresError) in try db.query("SELECT kid, activated_ms FROM key_activations") }
        var result: [String: Date] = [:]
        for row in rows { result[row.string("kid") ?? ""] = row.date("activated_ms") }
        return result
    }
}
