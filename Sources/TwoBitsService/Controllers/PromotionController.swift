import DeviceCheck
import Foundation
import HTTPServer
import Policy
import Ledger
import TwoBitsCrypto

/// Promotion claims and eligibility (role `promotions`).
struct PromotionController: Sendable {
    let policy: BitPolicy
    let ledger: any Ledger
    let metrics: MetricsRegistry

    func register(in routes: inout RouteTable) {
        routes.add("POST", "/v1/promotions/{id}/claim", .role(.promotions)) { request throws(APIError) in try await claim(request) }
        routes.add("POST", "/v1/promotions/{id}/eligibility", .role(.promotions)) { request throws(APIError) in
            let id = request.parameter("id")
            let body = try request.jsonBody()
            try body.allowOnly(["device_token"])
            let token = try body.deviceToken()
            do throws(PolicyError) {
                let e = try await policy.eligibility(id, token: token)
                struct Answer: Encodable { let promotion: String; let eligible: Bool; let reason: String; let claimed_month: String? }
                return .json(200, Answer(promotion: id, eligible: e.eligible, reason: e.reason.rawValue, claimed_month: e.claimedMonth?.description))
            } catch { throw APIError(error) }
        }
    }

    struct Claimed: Encodable {
        let promotion: String
        let claimed: Bool
        let claimed_month: String
    }

    private func claim(_ request: APIRequest) async throws(APIError) -> HTTPResponse {
        let id = request.parameter("id")
        let body = try request.jsonBody()
        try body.allowOnly(["device_token"])
        let token = try body.deviceToken()
        let client = request.clientName
        let idempotencyKey = try Self.idempotencyKey(request)

        var resuming = false
        if let key = idempotencyKey {
            let fingerprint = SHA256.hex("claim|\(id)|\(token.base64)")
            let begin: IdempotencyBegin
            do {
                begin = try await ledger.beginIdempotent(client: client, key: key, requestHash: fingerprint, owner: Self.instance, now: Date())
            } catch { throw APIError(.storage(error)) }
            switch begin {
            case .replay(let status, let stored):
                count(id, "replayed")
                return HTTPResponse(status: status, headers: [("Content-Type", "application/json"), ("Idempotent-Replayed", "true")], body: stored)
            case .conflict:
                throw APIError(422, "idempotency_key_conflict", "this Idempotency-Key was used for a different request in the last 24 hours")
            case .inProgress:
                count(id, "in_progress")
                throw APIError(409, "request_in_progress", "a request with this Idempotency-Key is still running; retry shortly", retryAfterSeconds: 1)
            case .unfinished(let intent):
                resuming = intent != nil
            case .started:
                break
            }
        }

        let ledger = self.ledger
        let response: HTTPResponse
        do throws(PolicyError) {
            let outcome = try await policy.claim(id, token: token, client: client, resuming: resuming) { intent throws(PolicyError) in
                guard let key = idempotencyKey else { return }
                do throws(StorageError) { try await ledger.recordIntent(client: client, key: key, intent: intent) } catch { throw .storage(error) }
            }
            count(id, outcome.transactionID == nil ? "claimed_on_retry" : "claimed")
            response = .json(200, Claimed(promotion: id, claimed: true, claimed_month: outcome.claimedMonth.description))
        } catch {
            let apiError = APIError(error)
            count(id, apiError.code)
            if let key = idempotencyKey {
                // Final answers are replayed; transient ones leave the key open for the retry.
                if apiError.status < 500 { try? await ledger.completeIdempotent(client: client, key: key, status: apiError.status, body: apiError.response.body) }
                else { try? await ledger.abandonIdempotent(client: client, key: key) }
            }
            throw apiError
        }
        if let key = idempotencyKey {
            do { try await ledger.completeIdempotent(client: client, key: key, status: response.status, body: response.body) } catch {
                // Give the key back (its intent stays), so the retry resumes instead of waiting on a twin.
                try? await ledger.abandonIdempotent(client: client, key: key)
                throw APIError(.storage(error))
            }
        }
        return response
    }

    /// This process, as the owner of the idempotency keys it is working on.
    static let instance = "pid\(getpid())-" + SecureRandom.bytes(8).hexString

    private func count(_ promotion: String, _ outcome: String) {
        // Only configured ids become label values: a client cannot grow the metric without bound.
        let label = policy.configuration.promotions.contains { $0.id == promotion } ? promotion : "unknown"
        metrics.increment("twobits_promotion_claims_total", "Promotion claims by promotion and outcome",
                          labels: [("promotion", label), ("outcome", outcome)])
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
