import Foundation
import OutboundHTTP
import Sandbox
import TokenSigning
import TwoBitsClient
import TwoBitsCrypto
import TwoBitsService
import TestSupport

/// A real TwoBits service and a real Apple sandbox on loopback ports (TestSupport's `ServiceHarness`): what the
/// client talks to, through a relay that holds the main API's key as the team's backend would.
final class ClientHarness: Sendable {
    static let appID = "TEAMID1234.com.example.client"

    let harness: ServiceHarness
    /// The tests' HTTP client (TwoBits' curl client, the harness's), shut down with the harness.
    let http: JSONHTTP

    var sandboxURL: URL { URL(string: harness.sandboxURL.hasSuffix("/") ? harness.sandboxURL : harness.sandboxURL + "/")! }
    var base: URL { URL(string: harness.base + "/")! }
    /// API keys by client name: "mainapi" (tokens), "admin" (admin).
    var keys: [String: String] { harness.keys }

    init(_ harness: ServiceHarness) {
        self.harness = harness
        http = JSONHTTP(client: harness.client)
    }

    /// The service's configuration: no promotions, and an `app_attest` section for `appID` unless `appAttest` is
    /// false (without it: 409 `not_enabled`), with more members such as `"rollout":0` from `appAttestFields`.
    static func configuration(appAttest: Bool, appAttestFields: String) -> ServiceHarness.Configuration {
        let appAttestSection = #"{"apps":["\#(appID)"],"environment":"production","root_ca_file":"appattest-root.pem","receipts":{"root_ca_file":"receipt-root.pem","enabled":false}\#(appAttestFields.isEmpty ? "" : "," + appAttestFields)}"#
        return ServiceHarness.Configuration(extra: ["promotions": nil, "app_attest": appAttest ? appAttestSection : nil])
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

    /// `POST /v1/app-attest/request-proofs/verify` as the main API would call it: the proof's headers as received,
    /// with the method, path and body digest it computed itself. The verdict.
    func verifyProof(_ headers: [String: String], method: String, path: String, body: Data) async throws -> [String: Any] {
        let digest = SHA256Digest.hash(body).base64URLEncodedString()
        let fields: [String: Any] = ["artifact": headers["TwoBits-Proof-Key"] ?? "", "client_data": headers["TwoBits-Proof-Client-Data"] ?? "",
                                     "assertion": headers["TwoBits-Proof-Assertion"] ?? "", "method": method, "path": path, "body_sha256": digest]
        let (status, json) = try await http.send("POST", base.appendingPathComponent("v1/app-attest/request-proofs/verify"), fields,
                                                 headers: ["Authorization": "Bearer " + keys["mainapi"]!])
        guard status == 200 else { throw JSONHTTP.Failure(description: "verify proof: \(status) \(json)") }
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

/// Runs `body` against a fresh `ClientHarness` and always closes it afterwards, also when `body` throws.
func withClientHarness(appAttest: Bool = true, appAttestFields: String = "", _ body: (ClientHarness) async throws -> Void) async throws {
    try await withService(ClientHarness.configuration(appAttest: appAttest, appAttestFields: appAttestFields)) { service in
        try await body(ClientHarness(service))
    }
}
