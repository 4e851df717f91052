extension WriteIntent {
    /// A row of the unknown-intents query: the audit event's columns, the intent's own, its token prefix as
    /// `intent_token_prefix`.
    public init(row r: some LedgerRow) throws(StorageError) {
        self.init(id: try r.text("intent_id") ?? "", tokenPrefix: try r.text("intent_token_prefix") ?? "", bits: try r.text("bits") ?? "",
                  month: try r.text("month") ?? "", successResult: try r.text("success_result").map(AuditResult.init(rawValue:)) ?? .ok, event: try AuditEvent(row: r))
    }
}
