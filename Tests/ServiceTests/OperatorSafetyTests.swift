import Foundation
import TestSupport
import Testing
import TwoBitsCrypto
import TwoBitsService
import WireFormats

/// Operator mistakes: credentials in the Apple URL, files others can read or change.
@Suite("Operator safety")
struct OperatorSafetyTests {
    @Test(arguments: [
        ("https://user:pass@api.example.com/v1", "https://***@api.example.com/v1"),
        ("http://user:p@ss@127.0.0.1:9000", "http://***@127.0.0.1:9000"),
        ("https://token@host", "https://***@host"),
        // A password holding '/', '#' or '?' (curl takes the last '@' before the path as the end of the user info).
        ("https://user:a/b#c?d@api.example.com/v1", "https://***@api.example.com/v1"),
        ("https://api.development.devicecheck.apple.com", "https://api.development.devicecheck.apple.com"),
    ])
    func userinfoIsHiddenInURLs(url: String, expected: String) {
        #expect(CredentialRedaction.redacted(url) == expected)
    }

    @Test func theLoggableBaseURLHidesItsUserInfo() throws {
        let json = #"{"apple":{"team_id":"TEAMID1234","key_id":"KEYID12345","private_key_file":"AuthKey.p8","base_url":"https://ops:Hx7/pw#r@Hx8?s@api.example.com/v1"}}"#
        let apple = try ServiceConfiguration.parse(Data(json.utf8)).apple
        #expect(apple.loggableBaseURL == "https://***@api.example.com/v1")
    }

    /// The log hides passwords in any message or text field, whoever forgot to hide them first.
    @Test func aLogLineHidesPasswordsInItsTexts() {
        let log = LogCollector()
        let writer = LogWriter(sink: { log.append($0) })
        writer.log(.error, "cannot reach https://ops:Hx7@host", [
            "detail": .string("could not connect (host=h password='Hx8 x' dbname=d)"),
            "uri": .string("postgresql://u:Hx9?/@h1,h2/db"),
        ])
        let text = log.withLock { $0.joined() }
        #expect(text.contains("cannot reach https://***@host") && text.contains("password=***"), "\(text)")
        #expect(!text.contains("Hx7") && !text.contains("Hx8") && !text.contains("Hx9"), "\(text)")
    }

    @Test func aBadBaseURLErrorDoesNotEchoItsCredentials() {
        let json = #"{"apple":{"team_id":"TEAMID1234","key_id":"KEYID12345","private_key_file":"AuthKey.p8","base_url":"ftp://u:hunter2@host"}}"#
        do {
            _ = try ServiceConfiguration.parse(Data(json.utf8))
            Issue.record("accepted")
        } catch {
            #expect(error.field == "apple.base_url")
            #expect(!error.description.contains("hunter2"))
        }
    }

    @Test func theListeningLogLineCarriesNoURLCredentials() async throws {
        // The sandbox ignores the userinfo; the log line must not show it.
        let port = try await withService { h in URL(string: h.sandbox.baseURL)!.port! }
        let directory = NSTemporaryDirectory() + "twobits-safety-" + SecureRandom.bytes(6).hexString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try P256PrivateKey.generate().pkcs8PEM.write(toFile: directory + "/AuthKey.p8", atomically: true, encoding: .utf8)
        let json = #"{"listen":"127.0.0.1:0","database":"l.sqlite","apple":{"team_id":"TEAMID1234","key_id":"KEYID12345","private_key_file":"AuthKey.p8","base_url":"http://ops:s3cr3t/pw#x?y@127.0.0.1:\#(port)"}}"#
        let configuration = try ServiceConfiguration.parse(Data(json.utf8), baseDirectory: directory)
        let log = LogCollector()
        let service = try TwoBitsService(configuration: configuration, logger: LogWriter(sink: { log.append($0) }))
        try await service.start()
        await service.shutdown()
        let text = log.withLock { $0.joined() }
        #expect(text.contains("listening"))
        #expect(text.contains("127.0.0.1:\(port)"))
        #expect(!text.contains("s3cr3t") && !text.contains("ops:"))
    }

    @Test func aP8ReadableByOthersAndAConfigurationWritableByOthersAreWarnedAbout() throws {
        let directory = NSTemporaryDirectory() + "twobits-safety-" + SecureRandom.bytes(6).hexString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let p8 = directory + "/AuthKey.p8", file = directory + "/config.json"
        try P256PrivateKey.generate().pkcs8PEM.write(toFile: p8, atomically: true, encoding: .utf8)
        try #"{"apple":{"team_id":"TEAMID1234","key_id":"KEYID12345","private_key_file":"AuthKey.p8"}}"#
            .write(toFile: file, atomically: true, encoding: .utf8)

        #expect(chmod(p8, 0o600) == 0 && chmod(file, 0o644) == 0)
        #expect(try ServiceConfiguration.load(path: file, environment: [:]).operatorWarnings().isEmpty)
        // Group access alone is a deployment choice, not a warning.
        #expect(chmod(p8, 0o640) == 0 && chmod(file, 0o664) == 0)
        #expect(try ServiceConfiguration.load(path: file, environment: [:]).operatorWarnings().isEmpty)

        #expect(chmod(p8, 0o644) == 0)
        var warnings = try ServiceConfiguration.load(path: file, environment: [:]).operatorWarnings()
        #expect(warnings.map(\.path) == [p8])
        #expect(warnings.first?.message.contains("chmod 600 \(p8)") == true)

        #expect(chmod(p8, 0o600) == 0 && chmod(file, 0o646) == 0)
        warnings = try ServiceConfiguration.load(path: file, environment: [:]).operatorWarnings()
        #expect(warnings.map(\.path) == [file])
    }

    @Test func rateLimitFieldsAreParsedWithDocumentedDefaults() throws {
        let digest = String(repeating: "a", count: 64), other = String(repeating: "b", count: 64)
        let json = #"{"apple":{"team_id":"TEAMID1234","key_id":"KEYID12345","private_key_file":"k.p8","max_calls_per_second":40},"clients":[{"name":"a","key_sha256":"\#(digest)","roles":["admin"],"rate_per_second":2.5},{"name":"b","key_sha256":"\#(other)","roles":["admin"]}]}"#
        let c = try ServiceConfiguration.parse(Data(json.utf8))
        #expect(c.apple.maxCallsPerSecond == 40)
        #expect(c.clients[0].ratePerSecond == 2.5 && c.clients[0].burst == 3)
        #expect(c.clients[1].ratePerSecond == nil)
        let bad = [
            #"{"apple":{"team_id":"TEAMID1234","key_id":"KEYID12345","private_key_file":"k.p8"},"clients":[{"name":"a","key_sha256":"\#(digest)","roles":["admin"],"burst":5}]}"#,
            #"{"apple":{"team_id":"TEAMID1234","key_id":"KEYID12345","private_key_file":"k.p8"},"clients":[{"name":"a","key_sha256":"\#(digest)","roles":["admin"],"rate_per_second":0}]}"#,
            #"{"apple":{"team_id":"TEAMID1234","key_id":"KEYID12345","private_key_file":"k.p8","max_calls_per_second":0}}"#,
        ]
        for json in bad {
            #expect(throws: ConfigurationError.self) { try ServiceConfiguration.parse(Data(json.utf8)) }
        }
    }
}
