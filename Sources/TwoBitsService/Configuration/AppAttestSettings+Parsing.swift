import AppAttest
import FoundationEssentials
import TwoBitsCrypto
import UseCases

extension AppAttestSettings {
    /// The `app_attest` section; nil when absent. It needs the `tokens` section (the same keys sign both tiers).
    static func parse(_ reader: inout ConfigReader, apple: ServiceConfiguration.Apple, tokens: TokenSettings,
                      baseDirectory: String) throws(ConfigurationError) -> AppAttestSettings? {
        guard var a = try reader.object("app_attest") else { return nil }
        guard tokens.enabled else {
            throw ConfigurationError("app_attest", "needs a \"tokens\" section: appattest tokens are signed with the tokens keys and verified with the same JWKS")
        }
        guard let appValues = try a.array("apps"), !appValues.isEmpty else {
            throw ConfigurationError("app_attest.apps", "is required: a list of \"TEAMID.bundle.id\" app ids")
        }
        var apps: [AppID] = []
        for (index, value) in appValues.enumerated() {
            guard let text = value.stringValue, let app = AppID(text), app.isWellFormed else {
                throw ConfigurationError("app_attest.apps[\(index)]",
                                         "must be \"TEAMID.bundle.id\": a team id of 10 uppercase letters and digits, a dot, and a bundle id of "
                                         + "1 to \(AppID.maxBundleIDLength) letters, digits, hyphens and periods")
            }
            apps.append(app)
        }
        // Development builds attest with the development AAGUID; follow Apple's environment unless told otherwise.
        let environmentName = try a.string("environment", default: apple.environment.rawValue)
        guard let environment = AppAttestEnvironment(rawValue: environmentName) else {
            throw ConfigurationError("app_attest.environment", "must be development or production")
        }
        let rootFile = try a.optionalString("root_ca_file").map { ServiceConfiguration.resolve($0, against: baseDirectory) }
        var chainVerifier = AppleRootCertificates.appAttestationVerifier
        var attestationRoots: [X509Certificate]?
        if let rootFile {
            let data = try ServiceConfiguration.readRegularFile(rootFile, field: "app_attest.root_ca_file")
            do {
                let roots = try X509Certificate.certificates(pem: String(decoding: data, as: UTF8.self))
                chainVerifier = try CertificateChainVerifier(roots: roots)
                attestationRoots = roots
            } catch {
                throw ConfigurationError("app_attest.root_ca_file", "\(rootFile) holds no usable PEM certificate: \(error)")
            }
        }
        var categories: Set<Int>?
        if let values = try a.array("validation_categories") {
            var set = Set<Int>()
            for (index, value) in values.enumerated() {
                if let number = value.intValue, number > 0, number < 1_000 { set.insert(Int(number)); continue }
                guard let name = value.stringValue, let known = Self.categoryNames[name] else {
                    throw ConfigurationError("app_attest.validation_categories[\(index)]",
                                             "must be one of \(Self.categoryNames.keys.sorted().joined(separator: ", ")) or a category number")
                }
                set.insert(known)
            }
            categories = set
        }
        let receipts = try ReceiptRefreshSettings.parse(&a, baseDirectory: baseDirectory)
        let settings = AppAttestSettings(
            apps: apps, environment: environment, chainVerifier: chainVerifier,
            challengeLifetime: TimeInterval(try a.int("challenge_ttl_seconds", default: 300, range: 30...3_600)),
            allowedValidationCategories: categories,
            requireValidationCategory: try a.bool("require_validation_category", default: false),
            requireDeviceToken: try a.bool("require_device_token", default: false),
            tokenTTLSeconds: try a.int("token_ttl_seconds", default: tokens.ttlSeconds, range: 60...86_400),
            rootOverride: rootFile,
            rollout: try AppAttestRollout.parse(&a),
            maxAttestationsPerSecond: try a.optionalInt("max_attestations_per_second", range: 1...100_000),
            risk: try RiskMetricPolicy.parse(&a), receipts: receipts,
            receiptVerifier: try receipts.receiptVerifier(attestationRoots: attestationRoots))
        try a.rejectUnknownFields()
        return settings
    }

    /// The names `validation_categories` accepts, as `ValidationCategory` spells them.
    static let categoryNames: [String: Int] = Dictionary(uniqueKeysWithValues:
        [ValidationCategory.platform, .testFlight, .development, .appStore, .enterprise, .developerID, .none].map { ($0.name, $0.rawValue) })
}
