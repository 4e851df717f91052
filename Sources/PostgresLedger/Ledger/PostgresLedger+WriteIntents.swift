public import Ledger

extension PostgresLedger {
    public func recordWriteIntent(_ intent: WriteIntent) async throws(StorageError) {
        var event = intent.event
        event.intentID = intent.id
        let values = Self.values(event)
        let at = event.at
        // One statement (atomic as a transaction), one round trip.
        try await statement("""
            WITH event AS (INSERT INTO audit_events (\(Self.auditColumns)) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11))
            INSERT INTO write_intents (intent_id, token_prefix, bits, month, success_result, created_ms, owner)
            VALUES ($12, $13, $14, $15, $16, $17, $18)
            """, values + [.text(intent.id), .text(intent.tokenPrefix), .text(intent.bits.description), .text(intent.month.description), .text(intent.successResult.rawValue),
                           .ms(at), .text(instance)])
    }

    public func resolveWriteIntent(id: String, result: AuditResult, bitsAfter: BitsSnapshot?, reason: String?, transactionID: String?) async throws(StorageError) {
        // One statement: the event settled and, unless the result is still unknown, the intent forgotten.
        try await statement("""
            WITH settled AS (UPDATE audit_events SET result = $1, bits_after = $2, reason = $3, transaction_id = $4
                             WHERE intent_id = $5 AND result IN ('pending', 'unknown'))
            DELETE FROM write_intents WHERE intent_id = $5 AND $1 <> 'unknown'
            """, [.text(result.rawValue), .optional(bitsAfter?.description), .optional(reason), .optional(transactionID), .text(id)])
    }

    public func unknownWriteIntents(tokenPrefix: String, limit: Int) async throws(StorageError) -> [WriteIntent] {
        let rows = try await statement("""
            SELECT a.*, w.token_prefix AS intent_token_prefix, w.bits, w.month, w.success_result FROM write_intents w
            JOIN audit_events a ON a.intent_id = w.intent_id
            WHERE w.token_prefix = $1 AND a.result = 'unknown'
            ORDER BY a.id LIMIT $2
            """, [.text(tokenPrefix), .int(max(1, limit))])
        return try rows.records(WriteIntent.init(row:))
    }

    /// As on SQLite, every `pending` intent becomes `unknown`, except those recorded by a ledger instance
    /// that is still alive (another replica's write in flight, or this instance's own): a replica
    /// starting must not declare a live replica's writes interrupted.
    public func markInterruptedWriteIntents(reason: String) async throws(StorageError) -> Int {
        try await run { db throws(PostgresError) -> Int in
            try db.query("""
                UPDATE audit_events a SET result = 'unknown', reason = CASE WHEN a.reason IS NULL THEN $1 ELSE a.reason || '; ' || $1 END
                WHERE a.result = 'pending' AND a.intent_id IS NOT NULL
                  AND NOT EXISTS (SELECT 1 FROM write_intents w
                                  WHERE w.intent_id = a.intent_id AND w.owner IS NOT NULL AND twobits_owner_alive(w.owner))
                RETURNING a.id
                """, [.text(reason)]).count
        }
    }
}
