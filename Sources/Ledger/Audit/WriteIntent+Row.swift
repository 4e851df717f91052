import DeviceDomain

extension WriteIntent {
    /// A row of the unknown-intents query: the audit event's columns, the intent's own, its token prefix as
    /// `intent_token_prefix`. Bits or a month that do not parse (a row another tool wrote) are a `StorageError`:
    /// nothing could tell whether such a write happened.
    public init(row r: some LedgerRow) throws(StorageError) {
        self.init(id: try r.text("intent_id") ?? "", tokenPrefix: try r.text("intent_token_prefix") ?? "",
                  bits: try r.parsed("bits", as: "bits (b0,b1)", Bits.init), month: try r.parsed("month", as: "a month YYYY-MM", YearMonth.init),
                  successResult: try r.text("success_result").map(AuditResult.init(rawValue:)) ?? .ok, event: try AuditEvent(row: r))
    }
}
