import Foundation
import OutboundHTTP
import TwoBitsClient

/// The relay the team's backend would be: each call posted to TwoBits' own path with the main API's key, the
/// signed-in user's session (if any) added as `binding` to the three token calls as docs/examples/relay.py
/// does, and TwoBits' answers handed back as `TwoBitsRelay` defines (refusals with their status, code and
/// reason). The app knows its session too: `sessionBinding()` answers it.
final class CurlRelay: TwoBitsRelay, @unchecked Sendable {
    let http: JSONHTTP
    let base: URL
    let apiKey: String
    private let lock = NSLock()
    private var signedIn: String?

    init(http: JSONHTTP, base: URL, apiKey: String) {
        self.http = http
        self.base = base
        self.apiKey = apiKey
    }

    /// The user's session (a sign-in, another account, a sign-out with nil).
    var session: String? {
        get { lock.withLock { signedIn } }
        set { lock.withLock { signedIn = newValue } }
    }

    func sessionBinding() async -> String? { session }

    func challenge() async throws -> ChallengeAnswer { try await post("v1/app-attest/challenges", [String: String]()) }

    func challenge(_ request: ChallengeRequest) async throws -> ChallengeAnswer { try await post("v1/app-attest/challenges", request) }

    func attest(_ request: AttestationRequest) async throws -> TokenAnswer {
        var body = request
        body.binding = session
        return try await post("v1/app-attest/attestations", body)
    }

    func assert(_ request: AssertionRequest) async throws -> TokenAnswer {
        var body = request
        body.binding = session
        return try await post("v1/app-attest/assertions", body)
    }

    func exchange(_ request: FallbackExchangeRequest) async throws -> TokenAnswer {
        var body = request
        body.binding = session
        return try await post("v1/fallback-tokens", body)
    }

    private struct ErrorEnvelope: Decodable {
        struct Body: Decodable {
            let code: String
            let reason: String?
        }
        let error: Body
    }

    private func post<Answer: Decodable>(_ path: String, _ body: some Encodable) async throws -> Answer {
        let response: OutboundResponse
        do {
            response = try await http.send("POST", base.appendingPathComponent(path), try JSONEncoder().encode(body),
                                           headers: ["Authorization": "Bearer " + apiKey])
        } catch {
            throw RelayFailure.unreachable(String(describing: error))
        }
        guard (200..<300).contains(response.status) else {
            let envelope = try? JSONDecoder().decode(ErrorEnvelope.self, from: response.body)
            throw RelayFailure.refused(status: response.status, code: envelope?.error.code ?? "http_\(response.status)",
                                       reason: envelope?.error.reason)
        }
        do {
            return try JSONDecoder().decode(Answer.self, from: response.body)
        } catch {
            throw RelayFailure.malformedAnswer("\(Answer.self): \(error)")
        }
    }
}
