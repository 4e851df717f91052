public import FoundationEssentials

/// What the ledger knows of an attested key's receipt at Apple's risk-metric service.
public struct AppAttestReceiptState: Sendable, Equatable {
    /// How many metrics a key's history keeps.
    public static let historyLimit = 10

    /// The latest metric Apple sent (the number of keys the device attested for the app in 30 days); nil
    /// until a renewed receipt carried one.
    public var riskMetric: Int?
    public var riskMetricAt: Date?
    /// The last metrics, newest first (at most `historyLimit`).
    public var history: [RiskMetricSample]
    /// Before it Apple answers 304; nil for an attestation's receipt (renewable at once).
    public var notBefore: Date?
    /// The receipt's expiration; nil until a renewed receipt said.
    public var expiresAt: Date?
    /// When Apple answered 404 (no data for the receipt): the key is not refreshed any more.
    public var stoppedAt: Date?
    /// When the key was last attested or asserted with.
    public var lastUsed: Date

    public init(riskMetric: Int?, riskMetricAt: Date?, history: [RiskMetricSample], notBefore: Date?, expiresAt: Date?, stoppedAt: Date?,
                lastUsed: Date) {
        self.riskMetric = riskMetric
        self.riskMetricAt = riskMetricAt
        self.history = history
        self.notBefore = notBefore
        self.expiresAt = expiresAt
        self.stoppedAt = stoppedAt
        self.lastUsed = lastUsed
    }
}
