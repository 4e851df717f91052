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

    public init(apps: [AppID], environment: AppAttestEnvironment, chainVerifier: CertificateChainVerifier = AppleRootCertificates.appAttestationVerifier,
                challengeLifetime: TimeInterval = 300, allowedValidationCategories: Set<Int>? = nil, requireValidationCategory: Bool = false) {
        self.apps = apps
        self.environment = environment
        self.chainVerifier = chainVerifier
        self.challengeLifetime = challengeLifetime
        self.allowedValidationCategories = allowedValidationCategories
        self.requireValidationCategory = requireValidationCategory
    }
}
