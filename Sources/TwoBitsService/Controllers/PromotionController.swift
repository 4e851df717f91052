import DeviceCheckModel
import FoundationEssentials
import HTTPServer
import Policy
import TwoBitsCrypto
import UseCases
import WireFormats

/// Promotion claims and eligibility (role `promotions`).
struct PromotionController: Sendable {
    let promotions: PromotionService
    let claims: ClaimService

    func register(in routes: inout RouteTable) {
        routes.add("POST", "/v1/promotions/{id}/claim", .role(.promotions)) { request throws(APIError) in try await claim(request) }
        routes.add("POST", "/v1/promotions/{id}/eligibility", .role(.promotions)) { request throws(APIError) in
            let id = request.parameter("id")
            let body = try request.jsonBody()
            try body.allowOnly(["device_token"])
            let token = try body.deviceToken()
            do throws(PolicyError) {
                let e = try await promotions.eligibility(id, token: token)
                struct Answer: Encodable { let promotion: String; let eligible: Bool; let reason: String; let claimed_month: String? }
                return .json(200, Answer(promotion: id, eligible: e.eligible, reason: e.reason.rawValue, claimed_month: e.claimedMonth?.description))
            } catch { throw APIError(error) }
        }
    }

    private func claim(_ request: APIRequest) async throws(APIError) -> ServerResponse {
        let id = request.parameter("id")
        let body = try request.jsonBody()
        try body.allowOnly(["device_token"])
        let token = try body.deviceToken()
        let idempotencyKey = try Self.idempotencyKey(request)
        let result: ClaimResult
        do throws(ClaimError) {
            result = try await claims.claim(ClaimRequest(promotion: id, token: token, client: request.clientName, idempotencyKey: idempotencyKey)) {
                Self.answer($0, promotion: id)
            }
        } catch { throw APIError(error) }
        // The answer as rendered once and stored under the key: a replay is the same bytes. A final refusal has
        // no header of its own (`Retry-After` is for 5xx answers, never final).
        switch result {
        case .answered(_, let answer):
            return ServerResponse(status: answer.status, headers: [("Content-Type", "application/json")], body: answer.body)
        case .replayed(let stored):
            return ServerResponse(status: stored.status, headers: [("Content-Type", "application/json"), ("Idempotent-Replayed", "true")], body: stored.body)
        }
    }

    /// The answer to a final verdict: 200 with the claim, or the refusal's error envelope.
    static func answer(_ verdict: ClaimVerdict, promotion id: String) -> RecordedAnswer {
        switch verdict {
        case .claimed(let outcome):
            // Written directly (the hot route), as JSONEncoder with sorted keys would write it.
            return RecordedAnswer(status: 200, body: Data((#"{"claimed":true,"claimed_month":""# + outcome.claimedMonth.description + #"","promotion":"#
                                                           + JSONString.quote(id) + "}").utf8))
        case .refused(let error):
            let response = APIError(error).response
            return RecordedAnswer(status: response.status, body: response.body)
        }
    }

    /// `Idempotency-Key`: 1-255 printable ASCII characters.
    static func idempotencyKey(_ request: APIRequest) throws(APIError) -> String? {
        guard let key = request.http.header("Idempotency-Key") else { return nil }
        guard (1...255).contains(key.utf8.count), key.utf8.allSatisfy({ $0 >= 0x21 && $0 <= 0x7E }) else {
            throw .badRequest("Idempotency-Key must be 1-255 printable ASCII characters")
        }
        return key
    }
}
