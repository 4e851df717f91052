import Foundation
import OutboundHTTP
import Sandbox
import TokenSigning
import TwoBitsClient
import TwoBitsCrypto
import TwoBitsService

/// A real TwoBits service and a real Apple sandbox on loopback ports: what the client talks to, through a
/// relay that holds the main API's key as the team's backend would.
final class ClientHarness: Sendable {
    static let teamID = "TEAMID1234"
    static let keyID = "KEYID12345"
    static let appID = "TEAMID1234.com.example.client"

    let directory: String
    let sandbox: AppleSandbox
    let sandboxURL: URL
    let service: TwoBitsService
    /// API keys by client name: "mainapi" (tokens), "admin" (admin).
    let keys: [String: String]
    /// The tests' HTTP client (TwoBits' curl client), shut down by `close()`.
    let http = JSONHTTP(client: CurlClient(maxConnectionsPerHost: 64, maxTotalConnections: 128))

    var base: URL { URL(string: "http://127.0.0.1:\(service.port)/")! }

    /// - Parameters:
    ///   - appAttest: whether the service has an `app_attest` section (without it: 409 `not_enabled`).
    ///   - appAttestFields: more members of that section, e.g. `"rollout":0`.
    init(appAttest: Bool = true, appAttestFields: String = "") async throws {
        directory = NSTemporaryDirectory() + "twobits-client-" + SecureRandom.bytes(6).hexString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let appleKey = P256PrivateKey.generate()
        try appleKey.pkcs8PEM.write(toFile: directory + "/AuthKey.p8", atomically: true, encoding: .utf8)
        try SigningKeyStore(directory: directory + "/keys").generate()

        sandbox = AppleSandbox(configuration: SandboxConfiguration(teamID: Self.teamID, keyID: Self.keyID, publicKey: appleKey.publicKey))
        let url = try sandbox.start()
        sandboxURL = URL(string: url.hasSuffix("/") ? url : url + "/")!
        try sandbox.appAttestAuthority.rootPEM.write(toFile: directory + "/appattest-root.pem", atomically: true, encoding: .utf8)

        var keys: [String: String] = [:]
        var clients: [String] = []
        for (name, roles) in [("mainapi", #"["tokens"]"#), ("admin", #"["admin"]"#)] {
            let (key, digest) = APIKey.generate()
            keys[name] = key
            clients.append(#"{"name":"\#(name)","key_sha256":"\#(digest)","roles":\#(roles)}"#)
        }
        self.keys = keys
        let appAttestSection = appAttest
            ? #","app_attest":{"apps":["\#(Self.appID)"],"environment":"production","root_ca_file":"appattest-root.pem"\#(appAttestFields.isEmpty ? "" : "," + appAttestFields)}"#
            : ""
        let json = #"{"listen":"127.0.0.1:0","database":"ledger.sqlite","#
            + #""apple":{"environment":"development","base_url":"\#(url)","team_id":"\#(Self.teamID)","key_id":"\#(Self.keyID)","#
            + #""private_key_file":"AuthKey.p8","timeout_ms":2000},"#
            + #""clients":[\#(clients.joined(separator: ","))],"bits":{"bit0":"promotion","bit1":"ban"},"#
            + #""tokens":{"audience":"main-api","keys_dir":"keys"}\#(appAttestSection)}"#
        let configuration = try ServiceConfiguration.parse(Data(json.utf8), baseDirectory: directory)
        service = try TwoBitsService(configuration: configuration, logger: LogWriter(sink: { _ in }))
        try await service.start()
    }

    func close() async {
        await service.shutdown()
        await sandbox.shutdown()
        http.client.shutdown()
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// The relay the team's backend would be: TwoBits' own paths, with the main API's key.
    func relay() -> CurlRelay {
        CurlRelay(http: http, base: base, apiKey: keys["mainapi"]!)
    }

    /// `POST /v1/fallback-tokens/verify` as the main API would call it, with `binding` when given: the verdict.
    func verify(_ token: ClientToken, binding: String?) async throws -> [String: Any] {
        var body: [String: Any] = ["token": token.value]
        if let binding { body["binding"] = binding }
        let (status, json) = try await http.send("POST", base.appendingPathComponent("v1/fallback-tokens/verify"), body,
                                                 headers: ["Authorization": "Bearer " + keys["mainapi"]!])
        guard status == 200 else { throw JSONHTTP.Failure(description: "verify: \(status) \(json)") }
        return json
    }

    /// TwoBits' `/metrics` count of fallback tokens issued for `reason` (`app_attest_status`).
    func fallbackReasonCount(_ reason: String) async throws -> Int {
        let response = try await http.send("GET", base.appendingPathComponent("metrics"), nil as Data?)
        let prefix = #"twobits_app_attest_fallback_reasons_total{reason="\#(reason)"} "#
        let line = String(decoding: response.body, as: UTF8.self).split(separator: "\n").first { $0.hasPrefix(prefix) }
        return line.flatMap { Double($0.dropFirst(prefix.count)) }.map { Int($0) } ?? 0
    }

    /// A POST to TwoBits with the admin key; the status and the JSON answer.
    func admin(_ method: String, _ path: String, _ body: [String: Any]? = nil) async throws -> (status: Int, json: [String: Any]) {
        try await http.send(method, base.appendingPathComponent(path), body, headers: ["Authorization": "Bearer " + keys["admin"]!])
    }
}
