public import FoundationEssentials

/// One entry of the audit trail: every bit write and every admin action.
/// Holds at most a short SHA-256 prefix of a device token, never the token.
public struct AuditEvent: Sendable, Equatable, Codable {
    public var id: Int64
    public var at: Date
    public var client: String
    /// An `AuditAction`'s raw value. A string, not the enum: a ledger shared with a newer version may hold
    /// actions this build does not know, and they must still be listed.
    public var action: String
    /// Promotion id, install id, key id or debug-secret name.
    public var subject: String?
    /// The device's bits as read before a write to Apple, stored as `(b0,b1)@YYYY-MM`, `… (stale)` or `never-set`.
    public var bitsBefore: BitsSnapshot?
    /// The bits written (nil for a write that did not happen), stored as `(b0,b1)@YYYY-MM`.
    public var bitsAfter: BitsSnapshot?
    /// Stored as its raw value ("ok", "banned", "pending", "failed", "unknown"; docs/policy.md, "The audit trail").
    public var result: AuditResult
    public var reason: String?
    public var transactionID: String?
    public var tokenPrefix: String?
    /// For writes to Apple: the id of the write intent recorded before the call.
    public var intentID: String?

    public init(id: Int64 = 0, at: Date = Date(), client: String, action: String, subject: String? = nil, bitsBefore: BitsSnapshot? = nil,
                bitsAfter: BitsSnapshot? = nil, result: AuditResult, reason: String? = nil, transactionID: String? = nil, tokenPrefix: String? = nil,
                intentID: String? = nil) {
        self.id = id
        self.at = at
        self.client = client
        self.action = action
        self.subject = subject
        self.bitsBefore = bitsBefore
        self.bitsAfter = bitsAfter
        self.result = result
        self.reason = reason
        self.transactionID = transactionID
        self.tokenPrefix = tokenPrefix
        self.intentID = intentID
    }

    /// An event of one of the actions this build records.
    public init(id: Int64 = 0, at: Date = Date(), client: String, action: AuditAction, subject: String? = nil, bitsBefore: BitsSnapshot? = nil,
                bitsAfter: BitsSnapshot? = nil, result: AuditResult, reason: String? = nil, transactionID: String? = nil, tokenPrefix: String? = nil,
                intentID: String? = nil) {
        self.init(id: id, at: at, client: client, action: action.rawValue, subject: subject, bitsBefore: bitsBefore, bitsAfter: bitsAfter,
                  result: result, reason: reason, transactionID: transactionID, tokenPrefix: tokenPrefix, intentID: intentID)
    }

    /// The action as this build knows it; nil for one recorded by a newer version.
    public var knownAction: AuditAction? { AuditAction(rawValue: action) }
}
