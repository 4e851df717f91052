import Foundation
import Testing
import TwoBitsCrypto
import TwoBitsService
import UseCases

/// Parses a configuration whose `app_attest` section is `{"apps": ["TEAMID1234.com.example.app"], <fields>}`,
/// in a directory of its own holding the Apple key the configuration names.
struct AppAttestSectionParser {
    let directory: String = {
        let d = NSTemporaryDirectory() + "twobits-app-attest-" + SecureRandom.bytes(6).hexString
        try? FileManager.default.createDirectory(atPath: d, withIntermediateDirectories: true)
        try? P256PrivateKey.generate().pkcs8PEM.write(toFile: d + "/AuthKey.p8", atomically: true, encoding: .utf8)
        return d
    }()

    /// `fields`: more members of the section (with or without a leading comma), or "".
    func parse(_ fields: String) throws(ConfigurationError) -> AppAttestSettings? {
        let more = fields.isEmpty || fields.hasPrefix(",") ? fields : "," + fields
        let json = #"{"apple":{"team_id":"TEAMID1234","key_id":"KEYID12345","private_key_file":"AuthKey.p8"},"tokens":{"audience":"x"},"#
            + #""app_attest":{"apps":["TEAMID1234.com.example.app"]\#(more)}}"#
        return try ServiceConfiguration.parse(Data(json.utf8), baseDirectory: directory).appAttest
    }

    /// Expects `fields` to be refused with an error naming `field` and saying what is wrong.
    func expectRefused(_ fields: String, naming field: String) {
        do {
            _ = try parse(fields)
            Issue.record("\(fields) was accepted")
        } catch {
            #expect(error.field == field, "\(fields) → \(error)")
            #expect(!error.problem.isEmpty)
        }
    }
}
