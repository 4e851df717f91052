import DeviceCheck
import Foundation
import Policy
import Ledger
import Locking
import Tokens
import TwoBitsCrypto

/// Exchanges DeviceCheck tokens (or development debug secrets) for short-lived fallback-tier tokens,
/// verifies and consumes them, and serves the JWKS.
final class FallbackTokenService: Sendable {
    let settings: TokenSettings
    let environment: AppleEnvironment
    let policy: BitPolicy
    let ledger: any Ledger
    let metrics: MetricsRegistry
    let logger: Logger
    let store: SigningKeyStore

    struct Keys {
        var issuer: TokenIssuer
        var verifier: TokenVerifier
        var jwks: Data
        /// When a retired key leaves the JWKS, the document must be rebuilt.
        var jwksValidUntil: Date
        var all: [SigningKey]
    }

    private let keys: Lock<Keys>

    /// The longest life any token of this server can have.
    var maxTokenLifetime: TimeInterval { Self.maxTokenLifetime(settings) }

    static func maxTokenLifetime(_ settings: TokenSettings) -> TimeInterval {
        TimeInterval(max(settings.ttlSeconds, settings.limitedUseTTLSeconds))
    }

    init(settings: TokenSettings, environment: AppleEnvironment, policy: BitPolicy, ledger: any Ledger,
         metrics: MetricsRegistry, logger: Logger) throws(ConfigurationError) {
        self.settings = settings
        self.environment = environment
        self.policy = policy
        self.ledger = ledger
        self.metrics = metrics
        self.logger = logger
        let store = SigningKeyStore(directory: settings.keysDirectory)
        self.store = store
        let lifetime = Self.maxTokenLifetime(settings)
        do {
            let all = try store.load()
            try store.recordActivation(of: all.last!)
            keys = Lock(Self.keys(all, signing: all.last!, store: store, settings: settings, lifetime: lifetime))
        } catch { throw ConfigurationError("tokens.keys_dir", error.description) }
    }

    /// The signing key, the verifier and the JWKS for the keys in the directory.
    /// The key this server signs with always verifies, even when another server has moved on.
    static func keys(_ all: [SigningKey], signing: SigningKey, store: SigningKeyStore, settings: TokenSettings,
                     lifetime: TimeInterval, now: Date = Date()) -> Keys {
        let activations = store.activations()
        var live = SigningKeyStore.verifying(all, activations: activations, maxTokenLifetime: lifetime, now: now)
        if !live.contains(where: { $0.kid == signing.kid }) { live.append(signing) }
        let retirements = SigningKeyStore.retirements(all, activations: activations)
        // Rebuild when a retired key's last token expires, and at least every minute to see keys
        // rotated and activated by other servers sharing the directory.
        let expiry = live.compactMap { retirements[$0.kid]?.addingTimeInterval(lifetime) }.filter { $0 > now }.min() ?? .distantFuture
        let validUntil = min(expiry, now.addingTimeInterval(60))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let jwks = (try? encoder.encode(JWKSet(keys: live.map(\.jwk)))) ?? Data()
        return Keys(issuer: TokenIssuer(key: signing, issuer: settings.issuer, audience: settings.audience),
                    verifier: TokenVerifier(keys: live, issuer: settings.issuer, audience: settings.audience),
                    jwks: jwks, jwksValidUntil: validUntil, all: all)
    }

    /// Whether the signing key file is still in place (readiness).
    var hasSigningKey: Bool { FileManager.default.fileExists(atPath: keysSnapshot().issuer.key.path) }

    func keysSnapshot() -> Keys { keys.withLock { $0 } }

    /// Re-reads the key directory (SIGHUP): the newest key starts signing, retired ones keep verifying.
    func reloadKeys() async {
        do {
            let all = try store.load()
            let newest = all.last!
            let previous = keysSnapshot().issuer.key.kid
            if previous != newest.kid { try store.recordActivation(of: newest) }
            let fresh = Self.keys(all, signing: newest, store: store, settings: settings, lifetime: maxTokenLifetime)
            keys.withLock { $0 = fresh }
            if previous != newest.kid {
                _ = try? await ledger.record(AuditEvent(client: "server", action: .keysActivated, subject: newest.kid, result: "ok",
                                                  reason: "replaces \(previous)"))
            }
            logger.log(.info, "signing keys reloaded", ["signing_kid": .string(newest.kid), "verifying": .int(fresh.all.count)])
        } catch {
            logger.log(.error, "signing keys not reloaded; the previous keys stay in use", ["error": .string(error.description)])
        }
    }

    /// Recomputes which keys verify, keeping the signing key (only SIGHUP or a restart changes that).
    private func refreshVerification() {
        let current = keysSnapshot().issuer.key
        guard let all = try? store.load() else { return }
        let fresh = Self.keys(all, signing: current, store: store, settings: settings, lifetime: maxTokenLifetime)
        keys.withLock { $0 = fresh }
    }

    /// The JWKS body, rebuilt when a retired key's last token has expired or a minute has passed.
    func jwks() -> Data {
        let now = Date()
        if let current = keys.withLock({ $0.jwksValidUntil > now ? $0.jwks : nil }) { return current }
        refreshVerification()
        return keys.withLock { $0.jwks }
    }

    /// The verifier, refreshed like the JWKS.
    func verifier() -> TokenVerifier {
        if keys.withLock({ $0.jwksValidUntil <= Date() }) { refreshVerification() }
        return keysSnapshot().verifier
    }

    func warnAboutDebugSecrets() async {
        guard environment == .production, let names = try? await ledger.debugSecretNames(), !names.isEmpty else { return }
        logger.log(.warning, "debug secrets exist but are refused in production; delete them with DELETE /v1/admin/debug-secrets/{name}",
                   ["count": .int(names.count)])
    }
}
