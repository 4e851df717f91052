import Foundation
import Ledger
import Tokens

extension FallbackTokenService {
    func currentIssuer() -> TokenIssuer { keysSnapshot().issuer }

    /// Verifies a token; with `consume`, marks a limited-use token used (exactly once across callers).
    func verify(_ token: String, consume: Bool) async throws(APIError) -> VerifyOutcome {
        let now = Date()
        switch verifier().verify(token, now: now) {
        case .failure(let failure):
            metrics.increment("twobits_fallback_verifications_total", "Token verifications by result", labels: [("result", failure.rawValue)])
            return .invalid(failure)
        case .success(let claims):
            metrics.increment("twobits_fallback_verifications_total", "Token verifications by result", labels: [("result", "valid")])
            guard consume else { return .valid(claims, alreadyConsumed: false) }
            guard claims.limitedUse else { throw .badRequest("consume is only for limited-use tokens (issued with limited_use: true)") }
            let first: Bool
            do {
                first = try await ledger.consumeTokenID(claims.jti, until: Date(timeIntervalSince1970: TimeInterval(claims.exp)), now: now)
            } catch { throw APIError(.storage(error)) }
            metrics.increment("twobits_fallback_consumes_total", "Consumes of limited-use tokens", labels: [("result", first ? "consumed" : "reused")])
            return .valid(claims, alreadyConsumed: !first)
        }
    }
}
