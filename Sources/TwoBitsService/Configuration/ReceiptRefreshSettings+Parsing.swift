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
        if let rootFile { _ = try receiptVerifier(trusting: rootFile) }
        let settings = ReceiptRefreshSettings(enabled: try receipts.bool("enabled", default: true),
                                              maxRefreshesPerSecond: try receipts.int("max_refreshes_per_second", default: 5, range: 1...100),
                                              idleDelay: try receipts.optionalDouble("idle_poll_seconds", range: 0.1...3_600) ?? ReceiptRefreshSettings().idleDelay,
                                              rootOverride: rootFile)
        try receipts.rejectUnknownFields()
        return settings
    }

    /// The verifier of the receipts Apple (or the sandbox) returns: Apple Root CA - G3, or the root `rootOverride` names.
    func receiptVerifier() throws(ConfigurationError) -> ReceiptVerifier {
        guard let rootOverride else { return ReceiptVerifier() }
        return try Self.receiptVerifier(trusting: rootOverride)
    }

    private static func receiptVerifier(trusting rootFile: String) throws(ConfigurationError) -> ReceiptVerifier {
        let data = try ServiceConfiguration.readRegularFile(rootFile, field: "app_attest.receipts.root_ca_file")
        do { return ReceiptVerifier(chainVerifier: try CertificateChainVerifier(roots: X509Certificate.certificates(pem: String(decoding: data, as: UTF8.self)))) } catch {
            throw ConfigurationError("app_attest.receipts.root_ca_file", "\(rootFile) holds no usable PEM certificate: \(error)")
        }
    }
}
