public import Ledger

/// How a write intent is resolved once its outcome is known (or settled by a later query): the audit event's
/// result, the bits after (nil for a write that did not happen), the reason and Apple's transaction id.
public struct WriteResolution: Sendable, Equatable {
    public let id: String
    public let result: AuditResult
    public let bitsAfter: BitsSnapshot?
    public let reason: String?
    public let transactionID: String?

    public init(id: String, result: AuditResult, bitsAfter: BitsSnapshot?, reason: String?, transactionID: String?) {
        self.id = id
        self.result = result
        self.bitsAfter = bitsAfter
        self.reason = reason
        self.transactionID = transactionID
    }
}
