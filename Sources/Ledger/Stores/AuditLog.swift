/// The audit trail: one history of what was done, by whom, with what result (docs/policy.md, "The audit trail").
public protocol AuditLog: Sendable {
    @discardableResult
    func record(_ event: AuditEvent) async throws(StorageError) -> Int64
    /// One event by its id; nil when there is none.
    func auditEvent(id: Int64) async throws(StorageError) -> AuditEvent?
    /// Newest first; `before` is an event id cursor; only events matching `filter`.
    func auditEvents(limit: Int, before: Int64?, filter: AuditFilter) async throws(StorageError) -> [AuditEvent]
}

extension AuditLog {
    /// Every event, newest first.
    public func auditEvents(limit: Int, before: Int64?) async throws(StorageError) -> [AuditEvent] {
        try await auditEvents(limit: limit, before: before, filter: AuditFilter())
    }
}
