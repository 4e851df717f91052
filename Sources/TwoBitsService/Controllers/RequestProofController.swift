import FoundationEssentials
import HTTPServer
import UseCases
import WireFormats

/// Request proofs (docs/app-attest.md, "Request proof"): the main API forwards the proof an app sent with a
/// request, with what it saw of that request, and gets a verdict (role `tokens`). A refused proof is a 200 with
/// `valid: false` and its reason, as `/v1/fallback-tokens/verify` answers a bad token: the question was answered.
/// A 4xx says the main API's own call is wrong; a 503 that there is no verdict yet. Only `valid: true` serves.
struct RequestProofController: Sendable {
    /// Nil when the configuration has no `app_attest` section (or no `tokens` section, which it needs).
    let proofs: RequestProofService?

    static let fields: Set<String> = ["artifact", "client_data", "assertion", "method", "path", "body_sha256", "device_token", "install_id"]
    /// The longest path (with its query) a proof binds: far above what an HTTP server takes in a request line.
    static let maxPathBytes = 8_192

    func register(in routes: inout RouteTable) {
        routes.add("POST", "/v1/app-attest/request-proofs/verify", .role(.tokens)) { request throws(APIError) in
            guard let proofs else { throw .notEnabled("App Attest is off; add an \"app_attest\" section to the configuration (docs/app-attest.md)") }
            let body = try request.jsonBody()
            try body.allowOnly(Self.fields)
            let proof = RequestProof(
                artifact: try body.string("artifact"), clientData: try Self.bytes(body, "client_data"), assertion: try Self.bytes(body, "assertion"),
                received: BoundRequest(method: try Self.method(body), path: try Self.path(body), bodySHA256: try Self.bodySHA256(body)),
                deviceToken: body.fields["device_token"] == nil ? nil : try body.deviceToken(), installID: try body.installID(),
                client: request.clientName)
            let verdict: RequestProofVerdict
            do throws(RequestProofError) { verdict = try await proofs.verify(proof) } catch { throw APIError(error) }
            switch verdict {
            case .valid(let proven):
                struct Answer: Encodable { let valid: Bool; let artifact: String; let counter: UInt32; let risk_metric: Int?; let install_id: String? }
                return .json(200, Answer(valid: true, artifact: proven.artifact, counter: proven.counter, risk_metric: proven.riskMetric,
                                         install_id: proven.installID))
            case .refused(let reason):
                struct Answer: Encodable { let valid: Bool; let reason: String }
                return .json(200, Answer(valid: false, reason: reason.rawValue))
            }
        }
    }

    /// The header's value as the app sent it: base64url (standard base64 accepted too, as for assertions).
    private static func bytes(_ body: RequestBody, _ field: String) throws(APIError) -> Data {
        let text = try body.string(field)
        guard !text.isEmpty, let data = Data(base64URLEncoded: text) ?? Data(base64Encoded: text) else { throw .badRequest("\(field) must be base64url") }
        return data
    }

    /// An HTTP method as the main API received it: an RFC 9110 token of 1-32 characters.
    private static func method(_ body: RequestBody) throws(APIError) -> String {
        let method = try body.string("method")
        let tchar = Set("!#$%&'*+-.^_`|~".utf8)
        guard (1...32).contains(method.utf8.count), method.utf8.allSatisfy({ isAlphanumeric($0) || tchar.contains($0) }) else {
            throw .badRequest("method must be the request's HTTP method as received (an RFC 9110 token, such as POST)")
        }
        return method
    }

    /// The request target as received, from its `/`, query included, percent-encoding unchanged: visible ASCII only.
    private static func path(_ body: RequestBody) throws(APIError) -> String {
        let path = try body.string("path")
        guard path.hasPrefix("/"), path.utf8.count <= maxPathBytes, path.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
            throw .badRequest("path must be the request target as received (from its /, with the query; visible ASCII, at most \(maxPathBytes) bytes)")
        }
        return path
    }

    /// The digest the main API computed of the body it received: base64url, no padding, of 32 bytes.
    private static func bodySHA256(_ body: RequestBody) throws(APIError) -> String {
        let digest = try body.string("body_sha256")
        guard digest.utf8.count == 43, Data(base64URLEncoded: digest)?.count == 32 else {
            throw .badRequest("body_sha256 must be the base64url (no padding) SHA-256 of the exact body bytes you received")
        }
        return digest
    }

    private static func isAlphanumeric(_ byte: UInt8) -> Bool {
        (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
    }
}
