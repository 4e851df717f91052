import AppAttest
import FoundationEssentials
import TwoBitsCrypto
import UseCases

extension ReceiptRefreshSettings {
    /// `app_attest.receipts`: `{"enabled", "max_refreshes_per_second", "idle_poll_seconds", "root_ca_file"}`
    /// (docs/configuration.md); on by default, trusting Apple Root CA - G3.
    static func parse(_ section: inout ConfigReader, baseDirectory: String) throws(ConfigurationError) -> ReceiptRefreshSettings {
        guard var receipts = try section.object("receipts") else { return ReceiptRefreshSettings() }
        let rootFile = try receipts.optionalString("root_ca_file").map { ServiceConfiguration.resolve($0, against: baseDirectory) }
        let settings = ReceiptRefreshSettings(enabled: try receipts.bool("enabled", default: true),
                                              maxRefreshesPerSecond: try receipts.int("max_refreshes_per_second", default: 5, range: 1...100),
                                              idleDelay: try receipts.optionalDouble("idle_poll_seconds", range: 0.1...3_600) ?? ReceiptRefreshSettings().idleDelay,
                                              rootOverride: rootFile)
        try receipts.rejectUnknownFields()
        return settings
    }

    /// The verifier of receipts (the attestation's own and Apple's renewals): Apple Root CA - G3, or the roots
    /// `rootOverride` names. Refuses at start what would make every receipt fail later: an App Attestation root
    /// given as the receipt root (it signs attestations, never receipts), and another attestation root than
    /// Apple's with Apple's receipt root (the sandbox's attestations carry the sandbox's receipts).
    func receiptVerifier(attestationRoots: [X509Certificate]?) throws(ConfigurationError) -> ReceiptVerifier {
        guard let rootOverride else {
            if let attestationRoots, !attestationRoots.contains(where: { $0.hasSameDER(as: AppleRootCertificates.appAttestationRoot) }) {
                throw ConfigurationError("app_attest.receipts.root_ca_file",
                                         "is required when app_attest.root_ca_file names another root than Apple's: attestations signed under it carry receipts signed under that authority's receipt root (the sandbox's: twobits sandbox --receipt-root FILE), which Apple Root CA - G3 refuses")
            }
            return ReceiptVerifier()
        }
        let field = "app_attest.receipts.root_ca_file"
        let data = try ServiceConfiguration.readRegularFile(rootOverride, field: field)
        let roots: [X509Certificate]
        do { roots = try X509Certificate.certificates(pem: String(decoding: data, as: UTF8.self)) } catch {
            throw ConfigurationError(field, "\(rootOverride) holds no usable PEM certificate: \(error)")
        }
        let attestationOnly = (attestationRoots ?? []) + [AppleRootCertificates.appAttestationRoot]
        if roots.contains(where: { root in attestationOnly.contains { $0.hasSameDER(as: root) } }) {
            throw ConfigurationError(field, "\(rootOverride) holds an App Attestation root, which signs attestations, not receipts: give Apple Root CA - G3 (or leave the field out) or the sandbox's receipt root (twobits sandbox --receipt-root FILE)")
        }
        do { return ReceiptVerifier(chainVerifier: try CertificateChainVerifier(roots: roots)) } catch {
            throw ConfigurationError(field, "\(rootOverride) holds no usable root: \(error)")
        }
    }
}
