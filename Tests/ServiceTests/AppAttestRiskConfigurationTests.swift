import AppAttest
import Foundation
import Testing
import TwoBitsCrypto
@testable import TwoBitsService
import UseCases

/// `app_attest.receipts` and `app_attest.risk`: read with their defaults, every violation refused naming its field.
@Suite struct AppAttestRiskConfigurationTests {
    let section = AppAttestSectionParser()
    var directory: String { section.directory }

    func parse(_ fields: String) throws(ConfigurationError) -> AppAttestSettings? { try section.parse(fields) }

    @Test func receiptsAndRiskAreRead() throws {
        let plain = try #require(try parse(""))
        #expect(plain.receipts.enabled && plain.receipts.maxRefreshesPerSecond == 5, "on by default, 5 a second")
        #expect(plain.receipts.idleDelay == 10, "a look for due keys every 10 s when none is due")
        #expect(try parse(#","receipts":{"idle_poll_seconds":0.2}"#)?.receipts.idleDelay == 0.2)
        #expect(plain.risk == nil)
        let set = try #require(try parse(#","receipts":{"enabled":false,"max_refreshes_per_second":20},"risk":{"max_metric":4,"action":"flag"}"#))
        #expect(!set.receipts.enabled && set.receipts.maxRefreshesPerSecond == 20)
        #expect(set.risk == RiskMetricPolicy(maxMetric: 4, action: .flag))
        #expect(try parse(#","risk":{"max_metric":9,"action":"refuse"}"#)?.risk == RiskMetricPolicy(maxMetric: 9, action: .refuse))
    }

    /// Receipts are renewed at Apple's fraud-metric host of the keys' environment (`app_attest.environment`),
    /// not DeviceCheck's: the other host answers 400 Incorrect Environment. The sandbox serves both paths.
    @Test func receiptsGoToTheDataHostOfTheKeysEnvironment() throws {
        func dataURL(apple: String, keys: String) throws -> String? {
            let json = #"{"apple":{"team_id":"TEAMID1234","key_id":"KEYID12345","private_key_file":"AuthKey.p8",\#(apple)},"tokens":{"audience":"x"},"#
                + #""app_attest":{"apps":["TEAMID1234.com.example.app"],"environment":"\#(keys)"}}"#
            return TwoBitsService.appAttestDataBaseURL(try ServiceConfiguration.parse(Data(json.utf8), baseDirectory: directory))
        }
        #expect(try dataURL(apple: #""environment":"development""#, keys: "production") == "https://data.appattest.apple.com")
        #expect(try dataURL(apple: #""environment":"production""#, keys: "development") == "https://data-development.appattest.apple.com")
        #expect(try dataURL(apple: #""base_url":"http://127.0.0.1:9""#, keys: "production") == nil, "the sandbox: the Apple base URL itself")
    }

    @Test func theRiskPolicysGraceAndAttestationCheckAreRead() throws {
        let refuse = try #require(try parse(#","risk":{"max_metric":5,"action":"refuse"}"#)?.risk)
        #expect(refuse.unknownGrace == 172_800 && refuse.checkAtAttestation, "two days; the attestation checked with refuse")
        let flag = try #require(try parse(#","risk":{"max_metric":5,"action":"flag"}"#)?.risk)
        #expect(!flag.checkAtAttestation, "no Apple call at attestation with flag unless told")
        let set = try #require(try parse(#","risk":{"max_metric":5,"action":"refuse","unknown_metric_grace_seconds":3600,"check_at_attestation":false}"#)?.risk)
        #expect(set.unknownGrace == 3_600 && !set.checkAtAttestation)
    }

    /// A receipt root that cannot verify this deployment's receipts stops the start, naming the field.
    @Test func aReceiptRootThatIsAnAttestationRootOrMissingIsRefused() throws {
        try AppleRootCertificates.appAttestationRootPEM.write(toFile: directory + "/apple-attestation-root.pem", atomically: true, encoding: .utf8)
        section.expectRefused(#","receipts":{"root_ca_file":"apple-attestation-root.pem"}"#, naming: "app_attest.receipts.root_ca_file")
        // Another attestation root (the sandbox's, or any test CA's) without its receipt root.
        let rootKey = P256PrivateKey.generate()
        let other = try X509CertificateBuilder(commonName: "Test App Attest Root", serial: 1, notBefore: Date(), notAfter: Date() + 86_400, isCA: true)
            .issue(subjectKey: rootKey.publicKey, issuer: nil, issuerKey: rootKey)
        try other.pem.write(toFile: directory + "/other-root.pem", atomically: true, encoding: .utf8)
        section.expectRefused(#","root_ca_file":"other-root.pem""#, naming: "app_attest.receipts.root_ca_file")
        section.expectRefused(#","root_ca_file":"other-root.pem","receipts":{"root_ca_file":"other-root.pem"}"#, naming: "app_attest.receipts.root_ca_file")
        // Apple's own attestation root given explicitly needs no receipt root: Apple Root CA - G3 verifies its receipts.
        #expect(try parse(#","root_ca_file":"apple-attestation-root.pem""#) != nil)
    }

    @Test(arguments: [
        (#","receipts":{"max_refreshes_per_second":0}"#, "app_attest.receipts.max_refreshes_per_second"),
        (#","receipts":{"max_refreshes_per_second":2.5}"#, "app_attest.receipts.max_refreshes_per_second"),
        (#","receipts":{"idle_poll_seconds":0}"#, "app_attest.receipts.idle_poll_seconds"),
        (#","receipts":{"idle_poll_seconds":"1"}"#, "app_attest.receipts.idle_poll_seconds"),
        (#","receipts":{"enabled":"yes"}"#, "app_attest.receipts.enabled"),
        (#","receipts":{"rate":5}"#, "app_attest.receipts.rate"),
        (#","receipts":true"#, "app_attest.receipts"),
        (#","risk":{"action":"refuse"}"#, "app_attest.risk.max_metric"),
        (#","risk":{"max_metric":0,"action":"refuse"}"#, "app_attest.risk.max_metric"),
        (#","risk":{"max_metric":"5","action":"refuse"}"#, "app_attest.risk.max_metric"),
        (#","risk":{"max_metric":5}"#, "app_attest.risk.action"),
        (#","risk":{"max_metric":5,"action":"block"}"#, "app_attest.risk.action"),
        (#","risk":{"max_metric":5,"action":"flag","notify":true}"#, "app_attest.risk.notify"),
        (#","receipts":{"root_ca_file":"missing.pem"}"#, "app_attest.receipts.root_ca_file"),
        (#","receipts":{"root_ca_file":"AuthKey.p8"}"#, "app_attest.receipts.root_ca_file"),
        (#","risk":{"max_metric":5,"action":"refuse","unknown_metric_grace_seconds":60}"#, "app_attest.risk.unknown_metric_grace_seconds"),
        (#","risk":{"max_metric":5,"action":"refuse","check_at_attestation":"yes"}"#, "app_attest.risk.check_at_attestation"),
    ])
    func aBadSectionIsRefusedNamingItsField(fields: String, field: String) {
        section.expectRefused(fields, naming: field)
    }
}
