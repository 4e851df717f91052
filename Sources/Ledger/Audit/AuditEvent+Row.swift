import FoundationEssentials

extension AuditEvent {
    /// An `audit_events` row (`SELECT *`).
    public init(row r: some LedgerRow) throws(StorageError) {
        self.init(id: try r.integer("id") ?? 0, at: try r.time("at_ms") ?? Date(timeIntervalSince1970: 0),
                  client: try r.text("client") ?? "", action: try r.text("action") ?? "", subject: try r.text("subject"),
                  bitsBefore: try r.text("bits_before").map(BitsSnapshot.init), bitsAfter: try r.text("bits_after").map(BitsSnapshot.init), result: AuditResult(rawValue: try r.text("result") ?? ""),
                  reason: try r.text("reason"), transactionID: try r.text("transaction_id"), tokenPrefix: try r.text("token_prefix"),
                  intentID: try r.text("intent_id"))
    }
}
