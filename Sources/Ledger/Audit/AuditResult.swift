/// The result of an audited action, each stored text declared once (docs/policy.md, "The audit trail"). The raw
/// value is the text the ledgers store in `audit_events.result` and `write_intents.success_result`, and the API
/// shows.
///
/// A stored text this build does not record is kept, as `.unrecognized`, not refused: a ledger shared with a
/// newer version (replicas mid-upgrade, a roll-back, `twobits ledger copy`) may hold results this build does
/// not know, and its audit trail must still be listed and copied as stored (as `AuditEvent.action` is).
public enum AuditResult: Sendable, Hashable {
    /// Done (for an Apple write: Apple wrote the bits).
    case ok
    /// An install registered past the reinstall limit: written, and the device banned.
    case banned
    /// Recorded, not done yet: a ban or unban ordered by install id, or an Apple write not answered yet.
    case pending
    /// Not done: Apple refused, the write was called off, or a later query showed it did not happen.
    case failed
    /// An Apple write whose outcome is not known yet, settled by a later query of the same device token.
    case unknown
    /// A stored text none of the cases above has (written by another version); made by `init(rawValue:)` only.
    case unrecognized(String)

    /// The results this build records, in declaration order.
    public static let recorded: [AuditResult] = [.ok, .banned, .pending, .failed, .unknown]
}

extension AuditResult: RawRepresentable {
    /// The result a stored text stands for; never nil (an unknown text is `.unrecognized`).
    public init(rawValue: String) {
        switch rawValue {
        case "ok": self = .ok
        case "banned": self = .banned
        case "pending": self = .pending
        case "failed": self = .failed
        case "unknown": self = .unknown
        default: self = .unrecognized(rawValue)
        }
    }

    /// The text stored and shown.
    public var rawValue: String {
        switch self {
        case .ok: "ok"
        case .banned: "banned"
        case .pending: "pending"
        case .failed: "failed"
        case .unknown: "unknown"
        case .unrecognized(let text): text
        }
    }

    // Equal when stored equal, as the ledgers' `result = ?` compares them.
    public static func == (a: AuditResult, b: AuditResult) -> Bool { a.rawValue == b.rawValue }

    public func hash(into hasher: inout Hasher) { hasher.combine(rawValue) }
}

extension AuditResult: Codable, CustomStringConvertible {
    /// Encoded as its stored text (a JSON string), as the audit events' `result` always was.
    public init(from decoder: any Decoder) throws {
        self.init(rawValue: try decoder.singleValueContainer().decode(String.self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }

    public var description: String { rawValue }
}
