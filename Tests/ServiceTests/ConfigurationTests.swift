import Foundation
import Testing
import TwoBitsCrypto
import TwoBitsService
import WireFormats

/// Every configuration error names its field and how to fix it, before anything listens.
@Suite struct ConfigurationTests {
    let directory: String = {
        let d = NSTemporaryDirectory() + "twobits-config-" + SecureRandom.bytes(6).hexString
        try? FileManager.default.createDirectory(atPath: d, withIntermediateDirectories: true)
        try? P256PrivateKey.generate().pkcs8PEM.write(toFile: d + "/AuthKey.p8", atomically: true, encoding: .utf8)
        return d
    }()

    func config(_ apple: String = #""team_id":"TEAMID1234","key_id":"KEYID12345","private_key_file":"AuthKey.p8""#, _ extra: String = "") -> String {
        #"{"apple":{\#(apple)}\#(extra.isEmpty ? "" : "," + extra)}"#
    }

    func error(_ json: String, env: [String: String] = [:]) -> ConfigurationError? {
        do {
            let c = try ServiceConfiguration.parse(Data(json.utf8), environment: env, baseDirectory: directory)
            _ = try TwoBitsService(configuration: c, logger: LogWriter(enabled: false))
            return nil
        } catch { return error }
    }

    @Test func aMinimalConfigurationIsValid() {
        #expect(error(config()) == nil)
    }

    @Test(arguments: [
        (#"{"#, ""),
        (#"{"listen":"127.0.0.1:8080"}"#, "apple"),
        (#"{"apple":{"team_id":"short","key_id":"KEYID12345","private_key_file":"AuthKey.p8"}}"#, "apple.team_id"),
        (#"{"apple":{"team_id":"TEAMID1234","key_id":"key-id-bad","private_key_file":"AuthKey.p8"}}"#, "apple.key_id"),
        (#"{"apple":{"team_id":"TEAMID1234","key_id":"KEYID12345","private_key_file":"missing.p8"}}"#, "apple.private_key_file"),
        (#"{"apple":{"team_id":"TEAMID1234","key_id":"KEYID12345","private_key_file":"AuthKey.p8","environment":"staging"}}"#, "apple.environment"),
        (#"{"apple":{"team_id":"TEAMID1234","key_id":"KEYID12345","private_key_file":"AuthKey.p8","timeout_ms":5}}"#, "apple.timeout_ms"),
        (#"{"apple":{"team_id":"TEAMID1234","key_id":"KEYID12345","private_key_file":"AuthKey.p8","tem_id":"x"}}"#, "apple.tem_id"),
        (#"{"listen":"localhost","apple":{"team_id":"TEAMID1234","key_id":"KEYID12345","private_key_file":"AuthKey.p8"}}"#, "listen"),
        (#"{"apple":{"team_id":"TEAMID1234","key_id":"KEYID12345","private_key_file":"AuthKey.p8"},"clients":[{"name":"a","key_sha256":"xyz","roles":["admin"]}]}"#, "clients[0].key_sha256"),
        (#"{"apple":{"team_id":"TEAMID1234","key_id":"KEYID12345","private_key_file":"AuthKey.p8"},"clients":[{"name":"a","key_sha256":"\#(String(repeating: "a", count: 64))","roles":["root"]}]}"#, "clients[0].roles"),
        (#"{"apple":{"team_id":"TEAMID1234","key_id":"KEYID12345","private_key_file":"AuthKey.p8"},"bits":{"bit0":"ban","bit1":"ban"}}"#, "bits.bit1"),
        (#"{"apple":{"team_id":"TEAMID1234","key_id":"KEYID12345","private_key_file":"AuthKey.p8"},"bits":{"mode":"reinstall-counter","ban_at":4}}"#, "bits.ban_at"),
        (#"{"apple":{"team_id":"TEAMID1234","key_id":"KEYID12345","private_key_file":"AuthKey.p8"},"promotions":[{"id":"a","starts":"2026-01","ends":"2026-06"},{"id":"b","starts":"2026-06"}]}"#, "promotions[1].id"),
        (#"{"apple":{"team_id":"TEAMID1234","key_id":"KEYID12345","private_key_file":"AuthKey.p8"},"promotions":[{"id":"a","starts":"2026-13"}]}"#, "promotions[0].starts"),
        (#"{"apple":{"team_id":"TEAMID1234","key_id":"KEYID12345","private_key_file":"AuthKey.p8"},"bits":{"bit0":"promotion","bit1":"promotion"},"promotions":[{"id":"a","starts":"2026-01"}]}"#, "promotions[0].bit"),
        (#"{"apple":{"team_id":"TEAMID1234","key_id":"KEYID12345","private_key_file":"AuthKey.p8"},"bits":{"mode":"none"},"promotions":[{"id":"a","starts":"2026-01"}]}"#, "promotions[0].id"),
        (#"{"apple":{"team_id":"TEAMID1234","key_id":"KEYID12345","private_key_file":"AuthKey.p8"},"tokens":{"audience":"x","ttl_seconds":10}}"#, "tokens.ttl_seconds"),
        (#"{"apple":{"team_id":"TEAMID1234","key_id":"KEYID12345","private_key_file":"AuthKey.p8"},"tokens":{"audience":"x","keys_dir":"nokeys"}}"#, "tokens.keys_dir"),
        (#"{"apple":{"team_id":"TEAMID1234","key_id":"KEYID12345","private_key_file":"AuthKey.p8"},"databse":"x"}"#, "databse"),
    ])
    func errorsNameTheField(json: String, field: String) {
        let e = error(json)
        #expect(e?.field == field, "\(json) → \(e.map { "\($0)" } ?? "no error")")
        #expect(e?.problem.isEmpty == false)
    }

    /// Issue 12 item 10: a key given twice was read as its first value. Now the file is refused, naming the key.
    @Test func duplicateKeysAreRefusedNamingTheKey() {
        let twice = config(#""team_id":"TEAMID1234","key_id":"KEYID12345","private_key_file":"AuthKey.p8","environment":"development","environment":"production""#)
        let e = error(twice)
        #expect(e?.field == "")
        #expect(e?.problem.contains(#"duplicate key "environment""#) == true, "\(e.map { "\($0)" } ?? "accepted")")
        let topLevel = config() .dropLast() + #","database":"a.sqlite","database":"b.sqlite"}"#
        #expect(error(String(topLevel))?.problem.contains(#"duplicate key "database""#) == true)
        // Not JSON at all names the byte.
        #expect(error(#"{"apple":{"team_id":01}}"#)?.problem == "the configuration is not valid JSON: a number with a leading zero at byte 20")
        // A configuration may be bigger than a request: 5,000 values are fine.
        let many = config(#""team_id":"TEAMID1234","key_id":"KEYID12345","private_key_file":"AuthKey.p8""#,
                          #""promotions":[{"id":"a","starts":"2026-01"}],"x":[\#(Array(repeating: "0", count: 5_000).joined(separator: ","))]"#)
        #expect(error(many)?.field == "x")
    }

    @Test func keyFileProblemsAreNamed() throws {
        let cases: [(String, String)] = [
            ("not a key", "not PEM"),
            ("-----BEGIN ENCRYPTED PRIVATE KEY-----\nAAAA\n-----END ENCRYPTED PRIVATE KEY-----\n", "encrypted"),
        ]
        for (contents, phrase) in cases {
            try contents.write(toFile: directory + "/bad.p8", atomically: true, encoding: .utf8)
            let e = error(config(#""team_id":"TEAMID1234","key_id":"KEYID12345","private_key_file":"bad.p8""#))
            #expect(e?.field == "apple.private_key_file")
            #expect(e?.problem.contains(phrase) == true, "\(e.map { "\($0)" } ?? "-")")
        }
    }

    @Test func environmentVariablesOverrideTheFile() throws {
        let json = config(#""team_id":"WRONG","key_id":"KEYID12345","private_key_file":"AuthKey.p8""#)
        let c = try ServiceConfiguration.parse(Data(json.utf8), environment: [
            "TWOBITS_APPLE_TEAM_ID": "TEAMID1234", "TWOBITS_LISTEN": "0.0.0.0:9999", "TWOBITS_APPLE_BASE_URL": "http://127.0.0.1:1",
            "TWOBITS_APPLE_ENVIRONMENT": "development", "TWOBITS_DATABASE": "/tmp/x.sqlite",
        ], baseDirectory: directory)
        #expect(c.apple.teamID == "TEAMID1234")
        #expect(c.listenHost == "0.0.0.0" && c.listenPort == 9999)
        #expect(c.apple.effectiveBaseURL == "http://127.0.0.1:1")
        #expect(c.apple.environment == .development)
        #expect(c.database == .sqlite(path: "/tmp/x.sqlite"))
    }

    @Test func withoutAnOverrideTheClientCallsApple() throws {
        let c = try ServiceConfiguration.parse(Data(config().utf8), baseDirectory: directory)
        #expect(c.apple.effectiveBaseURL == "https://api.devicecheck.apple.com")
        #expect(c.apple.environment == .production)
    }
}

/// `database` names a SQLite file or a PostgreSQL connection string; its password never shows.
@Suite struct DatabaseLocationTests {
    @Test func aURIIsPostgresAndAnythingElseAFile() throws {
        #expect(try DatabaseLocation("postgresql://u@db/twobits") == .postgres(uri: "postgresql://u@db/twobits"))
        #expect(try DatabaseLocation("POSTGRES://u@db/twobits") == .postgres(uri: "POSTGRES://u@db/twobits"))
        #expect(try DatabaseLocation("ledger.sqlite", baseDirectory: "/etc/twobits") == .sqlite(path: "/etc/twobits/ledger.sqlite"))
        #expect(try DatabaseLocation("/var/lib/twobits/t.sqlite", baseDirectory: "/etc/twobits") == .sqlite(path: "/var/lib/twobits/t.sqlite"))
        // A URI is never resolved against the configuration's directory.
        #expect(try DatabaseLocation("postgres:///twobits?host=/run/postgresql", baseDirectory: "/etc") == .postgres(uri: "postgres:///twobits?host=/run/postgresql"))
    }

    /// libpq's two forms reach it intact: keyword/value pairs and URIs with several hosts.
    @Test(arguments: [
        "host=db.internal user=twobits password=s3cret dbname=twobits",
        "host = db port=5432 password='a b\\'c' dbname=twobits sslmode=verify-full",
        "dbname=twobits",
        "postgresql://u:p@h1:5432,h2:5433/db?target_session_attrs=read-write",
    ])
    func libpqConnectionStringsArePostgres(text: String) throws {
        #expect(try DatabaseLocation(text, baseDirectory: "/etc/twobits") == .postgres(uri: text))
    }

    /// Neither a connection string nor a plain path: refused, naming the problem, without the password.
    @Test(arguments: [
        "host=db user=twobits password=hunter2 dbname=x 'unterminated",
        "HOST=db PASSWORD=hunter2",
        "mysql://u:hunter2@db/twobits",
        "postgresql:/u:hunter2@db/twobits",
        "twobits:hunter2@db/twobits",
        "host=db password='hunter2",
        "",
    ])
    func anythingElseThatIsNotAPlainPathIsRefused(text: String) {
        do {
            let location = try DatabaseLocation(text)
            Issue.record("accepted as \(location)")
        } catch {
            #expect(error.field == "database")
            #expect(!error.description.contains("hunter2"), "\(error)")
        }
    }

    @Test(arguments: [
        ("postgresql://twobits:s3cr%40t@db.internal:5432/twobits?sslmode=verify-full", "postgresql://***@db.internal:5432/twobits?sslmode=verify-full"),
        ("postgres://twobits@db/twobits?password=s3cr%40t&sslmode=require", "postgres://***@db/twobits?password=***&sslmode=require"),
        ("postgresql://a:b:c@h/d?PASSWORD=x", "postgresql://***@h/d?PASSWORD=***"),
        ("postgresql://user:p@ss@host/db", "postgresql://***@host/db"),
        ("postgresql:///twobits?host=/tmp", "postgresql:///twobits?host=/tmp"),
        // Hostile passwords: '/', '?', '#', '@', '&', spaces, quotes.
        ("postgresql://u:pa/ss?x#y@h1:5432,h2:5433/db?target_session_attrs=read-write", "postgresql://***@h1:5432,h2:5433/db?target_session_attrs=read-write"),
        ("postgresql://u@h/db?sslmode=require&password=a b&c", "postgresql://***@h/db?sslmode=require&password=***&c"),
        ("host=h user=u password=s3/cr?t#x dbname=d", "host=h user=u password=*** dbname=d"),
        ("host=h password = 'a b\\'c d' dbname=d", "host=h password = *** dbname=d"),
        ("host=h sslpassword=keypass password=pw dbname=d", "host=h sslpassword=*** password=*** dbname=d"),
        ("host=h password=a\\ b dbname=d", "host=h password=*** dbname=d"),
    ])
    func thePasswordIsMaskedWhereverTheLocationIsShown(uri: String, shown: String) throws {
        #expect(try DatabaseLocation(uri).description == shown)
    }

    /// The one redaction function on texts that quote a password back.
    @Test(arguments: [
        "unexpected spaces found in \"postgresql://u:hun ter2@h/db\", use percent-encoded spaces (%20) instead",
        "could not connect (host=h password='hunter2' dbname=d): refused",
        "cannot reach https://ops:hunter2@admin.example:8080/v1: timeout (see bob@example.com)",
        "PASSWORD=hunter2",
    ])
    func passwordsQuotedInTextAreHidden(text: String) {
        #expect(!CredentialRedaction.redacted(text).contains("hunter2"), "\(CredentialRedaction.redacted(text))")
    }

    @Test func poolSettingsAreReadAndBounded() throws {
        let base = #"{"apple":{"team_id":"T","key_id":"K","private_key_file":"k.p8"},"database":"postgresql://u:pw@h/d","#
        let c = try ServiceConfiguration.parse(Data((base + #""database_pool_size":3,"database_pipelines":5,"database_pool_wait_ms":150}"#).utf8))
        #expect(c.databasePool == .init(size: 3, pipelines: 5, waitMilliseconds: 150))
        #expect(try ServiceConfiguration.parse(Data((base + #""database_pool_size":3}"#).utf8)).databasePool.pipelines == ServiceDefaults.DatabasePool.pipelines)
        #expect(throws: ConfigurationError.self) { try ServiceConfiguration.parse(Data((base + #""database_pool_size":0}"#).utf8)) }
        #expect(throws: ConfigurationError.self) { try ServiceConfiguration.parse(Data((base + #""database_pipelines":0}"#).utf8)) }
        #expect(throws: ConfigurationError.self) { try ServiceConfiguration.parse(Data((base + #""database_pipelines":65}"#).utf8)) }
        do {
            _ = try ServiceConfiguration.parse(Data((base + #""database_pool_wait_ms":-1}"#).utf8))
            Issue.record("a negative wait was accepted")
        } catch {
            #expect(!"\(error)".contains("pw"))
        }
    }
}
