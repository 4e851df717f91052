public import FoundationEssentials

/// Which audit events to list; every field left nil matches all. Fields combine with AND.
public struct AuditFilter: Sendable, Equatable {
    public var action: String?
    public var client: String?
    public var result: AuditResult?
    /// Events at or after this time.
    public var since: Date?
    /// Events before this time.
    public var until: Date?
    /// Events whose subject is this install id (installs, pending orders by install id).
    public var installID: String?
    /// Events of one device, by the short digest prefix of its token (`token_sha256_prefix`).
    public var tokenPrefix: String?

    public init(action: String? = nil, client: String? = nil, result: AuditResult? = nil, since: Date? = nil, until: Date? = nil,
                installID: String? = nil, tokenPrefix: String? = nil) {
        self.action = action
        self.client = client
        self.result = result
        self.since = since
        self.until = until
        self.installID = installID
        self.tokenPrefix = tokenPrefix
    }
}
