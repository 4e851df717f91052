public import FoundationEssentials

/// `app_attest.receipts` (docs/configuration.md) and the refresher's fixed timings.
public struct ReceiptRefreshSettings: Sendable, Equatable {
    /// Whether this replica refreshes receipts at all.
    public var enabled: Bool
    /// Renewals a second, per replica (a burst of as many).
    public var maxRefreshesPerSecond: Int
    /// Keys used within this window are refreshed (Apple keeps a key's data 30 days).
    public var activeWindow: TimeInterval
    /// How long a replica holds a key it renews; another replica takes it over after this.
    public var leaseSeconds: TimeInterval
    /// The first back-off after a 429 or an outage, doubled per failure in a row up to `maxBackoff`.
    public var baseBackoff: TimeInterval
    public var maxBackoff: TimeInterval
    /// How long a key waits after a 304 (Apple's not-before is 24 h after the previous receipt).
    public var notYetDelay: TimeInterval
    /// How long a key whose renewal was refused (or whose environment is wrong) waits before another try.
    public var refusedDelay: TimeInterval
    /// How long the refresher waits when no key is due.
    public var idleDelay: TimeInterval
    /// A PEM file of the root to trust for receipts instead of Apple Root CA - G3 (the sandbox's); nil: Apple's.
    public var rootOverride: String?

    public init(enabled: Bool = true, maxRefreshesPerSecond: Int = 5, activeWindow: TimeInterval = 30 * 86_400, leaseSeconds: TimeInterval = 120,
                baseBackoff: TimeInterval = 30, maxBackoff: TimeInterval = 3_600, notYetDelay: TimeInterval = 3_600,
                refusedDelay: TimeInterval = 86_400, idleDelay: TimeInterval = 10, rootOverride: String? = nil) {
        self.enabled = enabled
        self.maxRefreshesPerSecond = maxRefreshesPerSecond
        self.activeWindow = activeWindow
        self.leaseSeconds = leaseSeconds
        self.baseBackoff = baseBackoff
        self.maxBackoff = maxBackoff
        self.notYetDelay = notYetDelay
        self.refusedDelay = refusedDelay
        self.idleDelay = idleDelay
        self.rootOverride = rootOverride
    }
}
