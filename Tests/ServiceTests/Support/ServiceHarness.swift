import DeviceCheckModel
import Foundation
import OutboundHTTP
import Sandbox
import Locking
import TokenSigning
import TwoBitsCrypto
import TwoBitsService
import WireFormats

/// A real TwoBits service and a real Apple sandbox on loopback ports, with API keys for each role.
final class ServiceHarness: Sendable {
    static let teamID = "TEAMID1234"
    static let keyID = "KEYID12345"

    let directory: String
    let sandbox: AppleSandbox
    let service: TwoBitsService
    let client = CurlClient(maxConnectionsPerHost: 2_048, maxTotalConnections: 4_096)
    let log = LogCollector()
    var logLines: LogCollector { log }
    /// API keys by client name: "marketing" (promotions), "mainapi" (tokens), "admin" (admin), "all" (every role).
    let keys: [String: String]

    var base: String { "http://127.0.0.1:\(service.port)" }

    /// - Parameters:
    ///   - extra: top-level configuration fields merged over the defaults (e.g. "bits", "promotions", "server").
    ///   - sandboxKey: the key the sandbox trusts (default: the service's own; pass another to provoke 401s).
    ///   - clientFields: extra fields of a client's entry, by client name (e.g. rate limits).
    ///   - adjust: changes the parsed configuration before the service is built (for values the
    ///     configuration refuses, such as a request deadline shorter than Apple's timeout).
    init(extra: [String: String] = [:], apple: [String: String] = [:], sandboxKey: P256PrivateKey? = nil,
         sandboxLatencyMilliseconds: Int = 0, clientFields: [String: String] = [:],
         adjust: (inout ServiceConfiguration) -> Void = { _ in }) async throws {
        directory = NSTemporaryDirectory() + "twobits-service-" + SecureRandom.bytes(6).hexString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let appleKey = P256PrivateKey.generate()
        try appleKey.pkcs8PEM.write(toFile: directory + "/AuthKey.p8", atomically: true, encoding: .utf8)
        try SigningKeyStore(directory: directory + "/keys").generate()

        sandbox = AppleSandbox(configuration: SandboxConfiguration(
            teamID: Self.teamID, keyID: Self.keyID, publicKey: (sandboxKey ?? appleKey).publicKey,
            latencyMilliseconds: sandboxLatencyMilliseconds))
        let sandboxURL = try sandbox.start()
        // The root the sandbox's simulated iPhones chain to, for an `app_attest` section's root_ca_file.
        try sandbox.appAttestAuthority.rootPEM.write(toFile: directory + "/appattest-root.pem", atomically: true, encoding: .utf8)

        var keys: [String: String] = [:]
        var clients: [String] = []
        for (name, roles) in [("marketing", #"["promotions"]"#), ("mainapi", #"["tokens"]"#), ("admin", #"["admin"]"#),
                              ("all", #"["promotions","tokens","admin"]"#)] {
            let (key, digest) = APIKey.generate()
            keys[name] = key
            let more = clientFields[name].map { "," + $0 } ?? ""
            clients.append(#"{"name":"\#(name)","key_sha256":"\#(digest)","roles":\#(roles)\#(more)}"#)
        }
        self.keys = keys

        var appleFields = [
            "environment": #""development""#, "base_url": "\"\(sandboxURL)\"", "team_id": "\"\(Self.teamID)\"",
            "key_id": "\"\(Self.keyID)\"", "private_key_file": #""AuthKey.p8""#, "timeout_ms": "2000",
            "max_in_flight": "4096", "max_connections": "2048",
        ]
        for (k, v) in apple { appleFields[k] = v }
        var fields = [
            "listen": #""127.0.0.1:0""#, "database": #""ledger.sqlite""#,
            "apple": "{" + appleFields.map { "\"\($0.key)\":\($0.value)" }.joined(separator: ",") + "}",
            "clients": "[" + clients.joined(separator: ",") + "]",
            "bits": #"{"bit0":"promotion","bit1":"ban"}"#,
            "promotions": #"[{"id":"spring","starts":"2020-01"}]"#,
            "tokens": #"{"audience":"main-api","keys_dir":"keys"}"#,
        ]
        for (k, v) in extra { fields[k] = v }
        let json = "{" + fields.map { "\"\($0.key)\":\($0.value)" }.joined(separator: ",") + "}"
        var configuration = try ServiceConfiguration.parse(Data(json.utf8), baseDirectory: directory)
        adjust(&configuration)
        let collector = log
        service = try TwoBitsService(configuration: configuration, logger: LogWriter(sink: { data in collector.append(data) }))
        try await service.start()
    }

    func close() async {
        await service.shutdown()
        await sandbox.shutdown()
        client.shutdown()
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// A fresh token for a new simulated device.
    func freshDevice() -> (id: String, token: String) {
        let id = sandbox.createDevice()
        return (id, sandbox.mintToken(for: id)!)
    }

    struct Answer {
        let status: Int
        let json: JSONValue?
        let text: String
        let response: OutboundResponse
        var code: String? { json?["error"]?["code"]?.stringValue }
    }

    func request(_ method: String, _ path: String, key: String? = "all", body: String? = nil,
                 headers: [(String, String)] = [], contentType: String? = "application/json") async throws -> Answer {
        var h = headers
        if let key { h.append(("Authorization", "Bearer " + (keys[key] ?? key))) }
        if body != nil, let contentType { h.append(("Content-Type", contentType)) }
        let response = try await client.send(OutboundRequest(method: method, url: base + path, headers: h,
                                                               body: body.map { Data($0.utf8) }, timeoutMilliseconds: 20_000))
        return Answer(status: response.status, json: try? JSONValue.parse(response.body), text: response.text, response: response)
    }

    func post(_ path: String, _ body: String, key: String? = "all", headers: [(String, String)] = []) async throws -> Answer {
        try await request("POST", path, key: key, body: body, headers: headers)
    }
}

/// Collects the service's log lines.
final class LogCollector: Sendable {
    private let lines = Lock<[String]>([])
    func append(_ data: Data) { lines.withLock { $0.append(String(decoding: data, as: UTF8.self)) } }
    func withLock<T>(_ body: ([String]) -> T) -> T { lines.withLock { body($0) } }
}

/// Threads of this process right now (Linux).
func currentThreadCount() -> Int {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
          let line = status.split(separator: "\n").first(where: { $0.hasPrefix("Threads:") }) else { return -1 }
    return Int(line.split(separator: "\t").last.map { $0.trimmingCharacters(in: .whitespaces) } ?? "") ?? -1
}
