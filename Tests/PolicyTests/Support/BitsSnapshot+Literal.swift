import Ledger

/// In tests only: a snapshot written as the text the ledgers store (`"never-set"`, `"(1,0)@\(month)"`), so that
/// expectations read as the audit trail does. Sources build snapshots from their cases.
extension BitsSnapshot: ExpressibleByStringInterpolation {
    public init(stringLiteral text: String) { self.init(text) }

    public init(stringInterpolation: DefaultStringInterpolation) { self.init(String(stringInterpolation: stringInterpolation)) }
}
