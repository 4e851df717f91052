public import AppAttest
public import FoundationEssentials
public import TwoBitsCrypto

/// What the strong tier accepts: the apps, the environment, the trust anchor and the time limits.
public struct AppAttestSettings: Sendable {
    public var apps: [AppID]
    public var environment: AppAttestEnvironment
    /// Apple's App Attestation root by default; the sandbox's root in development and tests.
    public var chainVerifier: CertificateChainVerifier
    /// How long a challenge stays usable (Apple's guidance and Firebase's: minutes).
    public var challengeLifetime: TimeInterval
    /// iOS 27 validation categories accepted (`apple_validation_category_01`); nil accepts any, and devices
    /// that send none are accepted unless `requireValidationCategory`.
    public var allowedValidationCategories: Set<Int>?
    public var requireValidationCategory: Bool
    /// Whether attestations and assertions must carry a DeviceCheck token (whose bits are checked for a ban).
    public var requireDeviceToken: Bool
    /// How long `appattest` tokens live; limited-use ones live as the fallback tier's do.
    public var tokenTTLSeconds: Int
    /// Where the trust anchor came from, for logs and warnings: nil for Apple's compiled-in root.
    public var rootOverride: String?
    /// The share of installs asked to attest (`enroll` on the challenge); nil asks every install.
    public var rollout: AppAttestRollout?
    /// Challenges answered `enroll: true` a second, per replica (Apple asks for under 100 attestations a
    /// second across the fleet); beyond it `enroll: false`. Nil: no cap.
    public var maxAttestationsPerSecond: Int?
    /// `app_attest.risk`: what a key whose risk metric is too high gets; nil: tokens carry the metric, nothing more.
    public var risk: RiskMetricPolicy?
    /// `app_attest.receipts`: the refresher of Apple's receipts (the risk metric).
    public var receipts: ReceiptRefreshSettings
    /// Verifies receipts (the attestation's own, and those Apple renews): Apple Root CA - G3 by default, the
    /// sandbox's receipt root in development and tests (`app_attest.receipts.root_ca_file`).
    public var receiptVerifier: ReceiptVerifier

    public init(apps: [AppID], environment: AppAttestEnvironment, chainVerifier: CertificateChainVerifier = AppleRootCertificates.appAttestationVerifier,
                challengeLifetime: TimeInterval = 300, allowedValidationCategories: Set<Int>? = nil, requireValidationCategory: Bool = false,
                requireDeviceToken: Bool = false, tokenTTLSeconds: Int = 3_600, rootOverride: String? = nil,
                rollout: AppAttestRollout? = nil, maxAttestationsPerSecond: Int? = nil,
                risk: RiskMetricPolicy? = nil, receipts: ReceiptRefreshSettings = ReceiptRefreshSettings(),
                receiptVerifier: ReceiptVerifier = ReceiptVerifier()) {
        self.receiptVerifier = receiptVerifier
        self.risk = risk
        self.receipts = receipts
        self.rollout = rollout
        self.maxAttestationsPerSecond = maxAttestationsPerSecond
        self.requireDeviceToken = requireDeviceToken
        self.tokenTTLSeconds = tokenTTLSeconds
        self.rootOverride = rootOverride
        self.apps = apps
        self.environment = environment
        self.chainVerifier = chainVerifier
        self.challengeLifetime = challengeLifetime
        self.allowedValidationCategories = allowedValidationCategories
        self.requireValidationCategory = requireValidationCategory
    }
}
