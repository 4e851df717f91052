import Foundation
import Glibc
import Testing
import TwoBitsCrypto
import TwoBitsService

/// Values the configuration used to take as they were: a rollout time that does not exist (rolled over to
/// another day), an app id with a NUL or of any length, and key or certificate files that are FIFOs (opening
/// one waits for a writer, so the start hung with no output). Each is refused naming its field.
@Suite struct ConfigurationInputTests {
    let section = AppAttestSectionParser()

    static let ramp = #""rollout":{"from":"FROM","to":"2029-06-01T00:00:00Z"}"#

    @Test(arguments: ["2027-02-30T00:00:00Z", "2027-02-29T00:00:00Z", "2027-04-31T00:00:00Z", "2027-01-01T24:00:00Z",
                      "2027-01-01T00:60:00Z", "2027-01-01T00:00:61Z", "2027-13-01T00:00:00Z", "2027-01-00T00:00:00Z",
                      "2027-01-01T00:00:00+24:00", "2027-01-01T00:00:00+01:60"])
    func aRolloutTimeThatDoesNotExistIsRefused(time: String) {
        section.expectRefused(Self.ramp.replacingOccurrences(of: "FROM", with: time), naming: "app_attest.rollout.from")
    }

    @Test(arguments: ["2028-02-29T00:00:00Z", "2027-04-30T23:59:59Z", "2027-01-01T00:00:00.250Z", "2027-01-01T01:00:00+01:00"])
    func aRolloutTimeThatExistsIsRead(time: String) throws {
        #expect(try section.parse(Self.ramp.replacingOccurrences(of: "FROM", with: time))?.rollout != nil)
    }

    /// A configuration naming `apps` and the Apple key of `section`'s directory.
    func parseApps(_ apps: String) throws(ConfigurationError) -> ServiceConfiguration {
        let json = #"{"apple":{"team_id":"TEAMID1234","key_id":"KEYID12345","private_key_file":"AuthKey.p8"},"tokens":{"audience":"x"},"#
            + #""app_attest":{"apps":[\#(apps)]}}"#
        return try ServiceConfiguration.parse(Data(json.utf8), baseDirectory: section.directory)
    }

    @Test(arguments: [#""TEAMID1234.com.exa\u0000mple""#, #""TEAMID1234.\#(String(repeating: "a", count: 5_000))""#,
                      #""TEAMID1234.\#(String(repeating: "a", count: 256))""#, #""TEAMID1234.com.example app""#,
                      #""TEAMID1234.com.exämple""#, #""TEAMID1234.com/example""#, #""TEAMID123\u0000.com.example""#,
                      #""teamid1234.com.example""#, #""TEAMID1234.""#])
    func anAppIDOutsideApplesFormIsRefused(app: String) {
        do {
            _ = try parseApps(app)
            Issue.record("\(app.prefix(60)) was accepted")
        } catch {
            #expect(error.field == "app_attest.apps[0]", "\(error)")
        }
    }

    @Test func anAppIDInApplesFormIsRead() throws {
        let long = String(repeating: "a", count: 255)
        let apps = try parseApps(#""TEAMID1234.com.example-app.Widget2", "TEAMID1234.\#(long)""#).appAttest?.apps
        #expect(apps?.map(\.bundleID) == ["com.example-app.Widget2", long])
    }

    // -- files that are not regular files ---------------------------------------------------------------

    /// A FIFO in a directory of its own. A thread writes into it after a few seconds, so that code which opens
    /// it fails this test by taking that long (and reading garbage) instead of hanging the suite.
    static func fifo(_ name: String) -> String {
        let directory = NSTemporaryDirectory() + "twobits-fifo-" + SecureRandom.bytes(6).hexString
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let path = directory + "/" + name
        #expect(mkfifo(path, 0o600) == 0)
        Thread.detachNewThread {
            Thread.sleep(forTimeInterval: 4)
            let fd = open(path, O_WRONLY | O_NONBLOCK)
            if fd >= 0 { _ = write(fd, "not a key\n", 10); close(fd) }
        }
        return path
    }

    /// Expects `body` to throw a ConfigurationError naming `field` and saying why, within a second.
    func expectRefusedAtOnce(_ field: String, _ body: () throws -> Void) {
        let started = Date()
        do {
            try body()
            Issue.record("accepted")
        } catch let error as ConfigurationError {
            #expect(error.field == field, "\(error)")
            #expect(error.problem.contains("not a regular file"), "\(error)")
        } catch { Issue.record("\(error)") }
        #expect(Date().timeIntervalSince(started) < 1, "it waited on the FIFO")
    }

    @Test func aPrivateKeyFileThatIsAFIFOIsRefusedBeforeItIsOpened() {
        let key = Self.fifo("AuthKey.p8")
        expectRefusedAtOnce("apple.private_key_file") {
            let json = #"{"apple":{"team_id":"TEAMID1234","key_id":"KEYID12345","private_key_file":"\#(key)"}}"#
            let configuration = try ServiceConfiguration.parse(Data(json.utf8), baseDirectory: section.directory)
            _ = try TwoBitsService(configuration: configuration, logger: LogWriter(enabled: false))
        }
    }

    @Test func aDirectoryAsThePrivateKeyIsRefusedNamingTheField() {
        expectRefusedAtOnce("apple.private_key_file") {
            let json = #"{"apple":{"team_id":"TEAMID1234","key_id":"KEYID12345","private_key_file":"\#(section.directory)"}}"#
            _ = try ServiceConfiguration.parse(Data(json.utf8), baseDirectory: section.directory)
        }
    }

    @Test func rootCertificateFilesThatAreFIFOsAreRefused() {
        let root = Self.fifo("root.pem")
        expectRefusedAtOnce("app_attest.root_ca_file") { _ = try section.parse(#""root_ca_file":"\#(root)""#) }
        let receiptRoot = Self.fifo("receipt-root.pem")
        expectRefusedAtOnce("app_attest.receipts.root_ca_file") { _ = try section.parse(#""receipts":{"root_ca_file":"\#(receiptRoot)"}"#) }
    }

    @Test func aConfigurationFileThatIsAFIFOIsRefused() {
        let file = Self.fifo("twobits.json")
        expectRefusedAtOnce("--config") { _ = try ServiceConfiguration.load(path: file, environment: [:]) }
    }

    /// Whatever reads a key goes through FileBytes, which refuses on the open descriptor (a file swapped for a
    /// FIFO after the configuration's stat, a signing key in `tokens.keys_dir`).
    @Test func fileBytesRefusesAFIFOWithoutWaitingForAWriter() {
        let path = Self.fifo("signing.pem")
        let started = Date()
        #expect { _ = try FileBytes.read(path) } throws: { ($0 as? FileBytes.ReadError)?.isNotRegularFile == true }
        #expect(Date().timeIntervalSince(started) < 1)
        #expect(throws: KeyError.self) { _ = try P256PrivateKey(contentsOfFile: path) }
    }
}
