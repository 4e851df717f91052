import DeviceCheck
import Foundation
import Policy
import Ledger
import Tokens
import TwoBitsCrypto

extension FallbackTokenService {
    /// Checks the credential and issues a token of the matching tier.
    func exchange(_ credential: ExchangeCredential, installID: String?, limitedUse: Bool, client: String) async throws(APIError) -> IssuedToken {
        let tier: Tier
        switch credential {
        case .debugSecret(let secret):
            guard environment == .development else {
                refuse("debug_disabled")
                throw APIError(403, "debug_disabled", "debug secrets work only while apple.environment is development")
            }
            let name: String?
            do { name = try await ledger.debugSecretName(digest: SHA256.hex(secret)) } catch { throw APIError(.storage(error)) }
            guard name != nil else {
                refuse("invalid_debug_secret")
                throw APIError(401, "invalid_debug_secret", "unknown or revoked debug secret")
            }
            tier = .debug

        case .deviceToken(let token):
            let now = Date()
            let remembered: Bool
            do {
                remembered = try await ledger.rememberDeviceToken(digest: token.digest, until: now.addingTimeInterval(TimeInterval(settings.reuseWindowSeconds)), now: now)
            } catch { throw APIError(.storage(error)) }
            guard remembered else {
                refuse("reused")
                throw APIError(409, "device_token_reused", "this device token was already exchanged; the app must generate a fresh one")
            }
            do {
                let admission = try await policy.admit(token: token, installID: installID, client: client)
                countApplied(admission.appliedPending)
            } catch {
                let apiError = APIError(error)
                switch error {
                case .deviceBanned(let applied):
                    countApplied(applied)
                    refuse("banned")
                case .apple(.invalidDeviceToken): refuse("invalid")
                default:
                    // No verdict on the token: let the client retry the same token.
                    try? await ledger.forgetDeviceToken(digest: token.digest)
                    refuse(apiError.status == 503 ? "apple_unavailable" : apiError.code)
                }
                throw apiError
            }
            tier = .devicecheck
        }

        let ttl = limitedUse ? settings.limitedUseTTLSeconds : settings.ttlSeconds
        let subject = installID ?? "anon_" + SecureRandom.bytes(16).base64URLEncodedString()
        let issuer = currentIssuer()
        let issued = issuer.issue(subject: subject, tier: tier, limitedUse: limitedUse, ttlSeconds: ttl)
        metrics.increment("twobits_fallback_tokens_issued_total", "Fallback tokens issued by tier",
                          labels: [("tier", tier.rawValue), ("limited_use", String(limitedUse))])
        return IssuedToken(token: issued.token, tier: tier, expiresIn: ttl)
    }

    private func countApplied(_ kind: PendingDeviceAction.Kind?) {
        guard let kind else { return }
        metrics.increment("twobits_pending_bans_applied_total", "Pending bans and unbans applied", labels: [("kind", kind.rawValue)])
    }

    private func refuse(_ reason: String) {
        metrics.increment("twobits_fallback_exchanges_refused_total", "Token exchanges refused by reason", labels: [("reason", reason)])
    }
}
