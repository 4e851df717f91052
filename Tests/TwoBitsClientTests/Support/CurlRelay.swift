import Foundation
import OutboundHTTP
import TwoBitsClient

/// The relay the team's backend would be: each call posted to TwoBits' own path with the main API's key, and
/// TwoBits' answers handed back as `TwoBitsRelay` defines (refusals with their status, code and reason).
struct CurlRelay: TwoBitsRelay {
    let http: JSONHTTP
    let base: URL
    let apiKey: String
    /// As `URLSessionRelay.sendsAppAttestStatus`: TwoBits refuses the field until it knows it.
    let sendsAppAttestStatus: Bool

    func challenge() async throws -> ChallengeAnswer { try await post("v1/app-attest/challenges", [String: String]()) }
    func attest(_ request: AttestationRequest) async throws -> TokenAnswer { try await post("v1/app-attest/attestations", request) }
    func assert(_ request: AssertionRequest) async throws -> TokenAnswer { try await post("v1/app-attest/assertions", request) }

    func exchange(_ request: FallbackExchangeRequest) async throws -> TokenAnswer {
        var body = request
        if !sendsAppAttestStatus { body.appAttestStatus = nil }
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
