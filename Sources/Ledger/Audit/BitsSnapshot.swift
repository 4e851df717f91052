public import DeviceDomain

/// A device's bits as an audit event records them, before or after a write: its description is the text the
/// ledgers store in `audit_events.bits_before`/`bits_after` and the API shows, `(1,0)@2026-11`,
/// `(1,0)@2026-11 (stale)` or `never-set` (docs/policy.md, "The audit trail").
///
/// A stored text this build does not write is kept, as `.unrecognized`, not refused: the trail is a history any
/// version may have written (a ledger shared mid-upgrade, a roll-back, `twobits ledger copy`), and it must still
/// be listed and copied as stored, as `AuditResult` and `AuditEvent.action` are.
public enum BitsSnapshot: Sendable, Hashable {
    /// The device had no bits set at Apple.
    case neverSet
    /// The bits and month as read (or as written); `stale` when older than the layout's `stale_after_months`,
    /// so they counted as never set.
    case state(BitState, stale: Bool)
    /// A stored text none of the cases above prints (written by another version); made by `init(_:)` only.
    case unrecognized(String)

    /// The snapshot of bits written (or read) fresh.
    public static func state(_ state: BitState) -> BitsSnapshot { .state(state, stale: false) }

    static let neverSetText = "never-set"
    static let staleSuffix = " (stale)"
}

extension BitsSnapshot: CustomStringConvertible {
    /// The snapshot a stored text stands for; never fails (a text this build does not print is `.unrecognized`).
    /// A text is read as a state only when the state prints it back byte for byte, so what is written back (a
    /// write intent settled, a ledger copied) is what was read.
    public init(_ text: String) {
        if text == Self.neverSetText { self = .neverSet; return }
        let stale = text.hasSuffix(Self.staleSuffix)
        let body = stale ? String(text.dropLast(Self.staleSuffix.count)) : text
        let parts = body.split(separator: "@", maxSplits: 1, omittingEmptySubsequences: false)
        if parts.count == 2, let bits = Bits(String(parts[0])), let month = YearMonth(String(parts[1])) {
            let snapshot = BitsSnapshot.state(BitState(bits: bits, lastUpdated: month), stale: stale)
            if snapshot.description == text { self = snapshot; return }
        }
        self = .unrecognized(text)
    }

    /// The text stored and shown.
    public var description: String {
        switch self {
        case .neverSet: Self.neverSetText
        case .state(let state, let stale): "\(state)" + (stale ? Self.staleSuffix : "")
        case .unrecognized(let text): text
        }
    }

    // Equal when stored equal, as `AuditResult` is: `.unrecognized("never-set")` is `.neverSet`.
    public static func == (a: BitsSnapshot, b: BitsSnapshot) -> Bool { a.description == b.description }

    public func hash(into hasher: inout Hasher) { hasher.combine(description) }
}

extension BitsSnapshot: Codable {
    /// Encoded as its stored text (a JSON string), as the audit events' `bits_before`/`bits_after` always were.
    public init(from decoder: any Decoder) throws {
        self.init(try decoder.singleValueContainer().decode(String.self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}
