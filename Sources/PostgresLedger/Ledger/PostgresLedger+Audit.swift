import FoundationEssentials
public import Ledger

extension PostgresLedger {
    static let auditColumns = "at_ms, client, action, subject, bits_before, bits_after, result, reason, transaction_id, token_prefix, intent_id"

    /// The audit trail is one history across replicas: ids come from one BIGSERIAL sequence.
    @discardableResult
    public func record(_ event: AuditEvent) async throws(StorageError) -> Int64 {
        let values = Self.values(event)
        let rows = try await run { db throws(PostgresError) in
            try db.query("INSERT INTO audit_events (\(Self.auditColumns)) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING id", values)
        }
        return rows.first?.int64("id") ?? 0
    }

    public func auditEvent(id: Int64) async throws(StorageError) -> AuditEvent? {
        try await run { db throws(PostgresError) in try db.query("SELECT * FROM audit_events WHERE id = $1", [.integer(id)]) }.records(AuditEvent.init(row:)).first
    }

    public func auditEvents(limit: Int, before: Int64?, filter: AuditFilter) async throws(StorageError) -> [AuditEvent] {
        let parameters: [PostgresValue] = [
            .integer(before ?? Int64.max), .int(max(1, min(limit, 1000))), .optional(filter.action), .optional(filter.client), .optional(filter.result?.rawValue),
            filter.since.map { .ms($0) } ?? .null, filter.until.map { .ms($0) } ?? .null, .optional(filter.installID), .optional(filter.tokenPrefix),
        ]
        // One statement for every filter (a NULL parameter matches all), so it is prepared once per connection.
        let rows = try await run { db throws(PostgresError) in
            try db.query("""
                SELECT * FROM audit_events WHERE id < $1 AND ($3::text IS NULL OR action = $3) AND ($4::text IS NULL OR client = $4)
                  AND ($5::text IS NULL OR result = $5) AND ($6::bigint IS NULL OR at_ms >= $6) AND ($7::bigint IS NULL OR at_ms < $7)
                  AND ($8::text IS NULL OR subject = $8) AND ($9::text IS NULL OR token_prefix = $9)
                ORDER BY id DESC LIMIT $2
                """, parameters)
        }
        return try rows.records(AuditEvent.init(row:))
    }

    static func values(_ event: AuditEvent) -> [PostgresValue] {
        [.ms(event.at), .text(event.client), .text(event.action), .optional(event.subject), .optional(event.bitsBefore?.description),
         .optional(event.bitsAfter?.description), .text(event.result.rawValue), .optional(event.reason), .optional(event.transactionID),
         .optional(event.tokenPrefix), .optional(event.intentID)]
    }
}
