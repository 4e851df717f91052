public import DeviceCheckModel
import FoundationEssentials
public import Ledger
public import Policy
public import TokenSigning
import TwoBitsCrypto
import WireFormats
public import WireVocabulary

/// Exchanges DeviceCheck tokens (or development debug secrets) for short-lived fallback-tier tokens, and
/// verifies and consumes them.
public struct TokenExchangeService: Sendable {
    let settings: TokenSettings
    let environment: AppleEnvironment
    let policy: BitPolicy
    let ledger: any DebugSecretStore & ReplayGuard
    let events: any UseCaseEvents
    /// The keys that sign and verify.
    public let keys: KeyRing

    public init(settings: TokenSettings, environment: AppleEnvironment, policy: BitPolicy, ledger: any DebugSecretStore & ReplayGuard,
                keys: KeyRing, events: any UseCaseEvents) {
        self.settings = settings
        self.environment = environment
        self.policy = policy
        self.ledger = ledger
        self.keys = keys
        self.events = events
    }

    /// Checks the credential and issues a token of the matching tier, bound to `binding` when given;
    /// `fallbackReason` (why the app did not use App Attest) is counted once the token is issued.
    public func exchange(_ credential: ExchangeCredential, installID: String?, limitedUse: Bool, binding: SessionBinding? = nil,
                         fallbackReason: AppAttestFallbackReason? = nil, client: String) async throws(ExchangeError) -> IssuedToken {
        let tier: Tier
        switch credential {
        case .debugSecret(let secret):
            guard environment == .development else { throw reported(.debugDisabled) }
            let name: String?
            do { name = try await ledger.debugSecretName(digest: SHA256Digest.hex(secret)) } catch { throw .storage(error) }
            guard name != nil else { throw reported(.invalidDebugSecret) }
            tier = .debug

        case .deviceToken(let token):
            let now = Date()
            let remembered: Bool
            do {
                remembered = try await ledger.rememberDeviceToken(digest: token.digest, until: now.addingTimeInterval(TimeInterval(settings.reuseWindowSeconds)), now: now)
            } catch { throw .storage(error) }
            guard remembered else { throw reported(.deviceTokenReused) }
            do throws(PolicyError) {
                let admission = try await policy.admit(token: token, installID: installID, client: client)
                if let applied = admission.appliedPending { events.pendingActionApplied(applied) }
            } catch {
                switch error {
                case .deviceBanned(let applied): if let applied { events.pendingActionApplied(applied) }
                case .apple(.invalidDeviceToken): break
                default:
                    // No verdict on the token: let the client retry the same token.
                    try? await ledger.forgetDeviceToken(digest: token.digest)
                }
                throw reported(.refused(error))
            }
            tier = .devicecheck
        }

        let ttl = limitedUse ? settings.limitedUseTTLSeconds : settings.ttlSeconds
        let subject = installID ?? "anon_" + SecureRandom.bytes(16).base64URLEncodedString()
        let issued = keys.issuer().issue(subject: subject, tier: tier, limitedUse: limitedUse, ttlSeconds: ttl, binding: binding)
        events.tokenIssued(tier: tier, limitedUse: limitedUse)
        if let fallbackReason { events.appAttestFallback(reason: fallbackReason) }
        return IssuedToken(token: issued.token, tier: tier, expiresIn: ttl)
    }

    /// Reports a refusal and returns it, for `throw`.
    private func reported(_ error: ExchangeError) -> ExchangeError {
        events.exchangeRefused(error)
        return error
    }
}
