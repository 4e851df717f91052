public import DeviceCheckModel
import FoundationEssentials
public import Ledger
import Policy
public import TokenSigning
import TwoBitsCrypto
import WireFormats
public import WireVocabulary

/// Exchanges DeviceCheck tokens (or development debug secrets) for short-lived fallback-tier tokens, and
/// verifies and consumes them.
public struct TokenExchangeService: Sendable {
    let settings: TokenSettings
    let environment: AppleEnvironment
    let admission: DeviceAdmission
    let ledger: any DebugSecretStore & ReplayGuard
    let events: any UseCaseEvents
    /// The keys that sign and verify.
    public let keys: KeyRing

    public init(settings: TokenSettings, environment: AppleEnvironment, admission: DeviceAdmission, ledger: any DebugSecretStore & ReplayGuard,
                keys: KeyRing, events: any UseCaseEvents) {
        self.settings = settings
        self.environment = environment
        self.admission = admission
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
                let admitted = try await admission.admit(token: token, installID: installID, client: client)
                if let applied = admitted.appliedPending { events.pendingActionApplied(applied) }
            } catch {
                if case .deviceBanned(let applied?) = error { events.pendingActionApplied(applied) }
                if !Self.judgesToken(error) {
                    // The token was remembered before it was judged: with no verdict, it is forgotten again so that the
                    // client may retry the same token.
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

    /// Whether `error` is a verdict on the device token (banned, or invalid at Apple), which a retry of the same
    /// token would only repeat; anything else (Apple or the ledger unavailable, a cancelled request) is none.
    static func judgesToken(_ error: PolicyError) -> Bool {
        switch error {
        case .deviceBanned, .apple(.invalidDeviceToken): true
        default: false
        }
    }

    /// Reports a refusal and returns it, for `throw`.
    private func reported(_ error: ExchangeError) -> ExchangeError {
        events.exchangeRefused(error)
        return error
    }
}
