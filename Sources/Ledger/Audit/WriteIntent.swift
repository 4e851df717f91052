public import DeviceDomain
import FoundationEssentials

/// A write to Apple's bits, recorded before it is sent so that every write ends up audited with its
/// real outcome. The audit event (result `pending`) and the intent share `id`.
public struct WriteIntent: Sendable, Equatable {
    /// The intent id (random), also the audit event's `intent_id`.
    public var id: String
    /// The short SHA-256 prefix of the device token the write is sent with (as in the audit event): a
    /// later request with the same token finds the intent by it and settles it with its own query.
    public var tokenPrefix: String
    /// The bits written, stored as their description `(b0,b1)`.
    public var bits: Bits
    /// The month Apple stamps on the write, stored as `YYYY-MM`.
    public var month: YearMonth
    /// The result the audit event gets when the write is known to have happened (`ok`, `banned`).
    public var successResult: AuditResult
    /// The audit event as it stands (result `pending` or `unknown` while unresolved).
    public var event: AuditEvent

    public init(id: String, tokenPrefix: String, bits: Bits, month: YearMonth, successResult: AuditResult, event: AuditEvent) {
        self.id = id
        self.tokenPrefix = tokenPrefix
        self.bits = bits
        self.month = month
        self.successResult = successResult
        self.event = event
    }
}
