import Foundation
import Testing
import TwoBitsCrypto
import TwoBitsService
import WireFormats

/// More configuration refusals, each naming its field (as `ConfigurationTests`), and a database that
/// cannot be opened, refused at startup rather than at the first request.
@Suite struct ConfigurationRefusalTests {
    static let directory: String = {
        let d = NSTemporaryDirectory() + "twobits-config-refusals-" + SecureRandom.bytes(6).hexString
        try? FileManager.default.createDirectory(atPath: d, withIntermediateDirectories: true)
        try? P256PrivateKey.generate().pkcs8PEM.write(toFile: d + "/AuthKey.p8", atomically: true, encoding: .utf8)
        return d
    }()
    static let apple = #""apple":{"team_id":"TEAMID1234","key_id":"KEYID12345","private_key_file":"AuthKey.p8""#

    static func error(_ json: String) -> ConfigurationError? {
        do {
            let c = try ServiceConfiguration.parse(Data(json.utf8), environment: [:], baseDirectory: directory)
            _ = try TwoBitsService(configuration: c, logger: LogWriter(enabled: false))
            return nil
        } catch { return error }
    }

    @Test(arguments: [
        (#"{\#(apple)},"bits":{"bit0":"coupon","bit1":"ban"}}"#, "bits.bit0"),
        (#"{\#(apple)},"bits":{"mode":"counter"}}"#, "bits.mode"),
        (#"{\#(apple)},"promotions":[{"id":"Spring Sale","starts":"2026-01"}]}"#, "promotions[0].id"),
        (#"{\#(apple),"base_url":"ftp://apple.example"}}"#, "apple.base_url"),
        (#"{\#(apple)},"clients":[{"name":"a","key_sha256":"\#(String(repeating: "a", count: 64))","roles":[]}]}"#, "clients[0].roles"),
        (#"{\#(apple),"timeout_ms":2000},"server":{"request_deadline_ms":3000}}"#, "server.request_deadline_ms"),
        (#"{\#(apple)},"listen":"300.1.1.1:8080"}"#, "listen"),
        (#"{\#(apple)},"server":{"wake_coalescing_us":10001}}"#, "server.wake_coalescing_us"),
        (#"{"apple":{"key_id":"KEYID12345","private_key_file":"AuthKey.p8"}}"#, "apple.team_id"),
        (#"{\#(apple)},"database":"/nonexistent-dir-\#(UUID().uuidString)/ledger.sqlite"}"#, "database"),
    ])
    func refusalsNameTheField(json: String, field: String) {
        let e = Self.error(json)
        #expect(e?.field == field, "\(json) → \(e.map { "\($0)" } ?? "no error")")
        #expect(e?.problem.isEmpty == false)
    }

    @Test func anUnreadableConfigurationFileIsNamed() {
        do {
            _ = try ServiceConfiguration.load(path: Self.directory + "/missing.json", environment: [:])
            Issue.record("loaded a missing file")
        } catch {
            #expect(error.field == "--config")
            #expect(error.problem.contains("cannot read"))
        }
    }
}
