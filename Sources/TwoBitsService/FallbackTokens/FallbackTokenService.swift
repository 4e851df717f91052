import DeviceCheck
import Foundation
import Policy
import Storage
import Synchronization
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

    private let keys: Mutex<Keys>

    /// The longest life any token of this server can have.
    var maxTokenLifetime: TimeInterval { TimeInterval(max(settings.ttlSeconds, settings.limitedUseTTLSeconds)) }

    init(settings: TokenSettings, environment: AppleEnvironment, policy: BitPolicy, ledger: any Ledger,
         metrics: MetricsRegistry, logger: Logger) throws(ConfigurationError) {
        self.settings = settings
        self.environment = environment
        self.policy = policy
        self.ledger = ledger
        self.metrics = metrics
        self.logger = logger
        self.store = SigningKeyStore(directory: settings.keysDirectory)
        do {
            keys = Mutex(try Self.loadKeys(store: store, settings: settings, lifetime: TimeInterval(max(settings.ttlSeconds, settings.limitedUseTTLSeconds))))
        } catch { throw ConfigurationError("tokens.keys_dir", error.description) }
    }

    static func loadKeys(store: SigningKeyStore, settings: TokenSettings, lifetime: TimeInterval, now: Date = Date()) throws(SigningKeyError) -> Keys {
        let all = try store.load()
        let live = SigningKeyStore.verifying(all, maxTokenLifetime: lifetime, now: now)
        let retirements = SigningKeyStore.retirements(all)
        let validUntil = live.compactMap { retirements[$0.kid]?.addingTimeInterval(lifetime) }.min() ?? .distantFuture
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let jwks = (try? encoder.encode(JWKSet(keys: live.map(\.jwk)))) ?? Data()
        return Keys(issuer: TokenIssuer(key: all.last!, issuer: settings.issuer, audience: settings.audience),
                    verifier: TokenVerifier(keys: live, issuer: settings.issuer, audience: settings.audience),
                    jwks: jwks, jwksValidUntil: validUntil, all: all)
    }

    var hasSigningKey: Bool { true }

    func keysSnapshot() -> Keys { keys.withLock { $0 } }

    /// Re-reads the key directory (SIGHUP): a rotated key starts signing, retired ones keep verifying.
    func reloadKeys() {
        do {
            let fresh = try Self.loadKeys(store: store, settings: settings, lifetime: maxTokenLifetime)
            let previous = keys.withLock { k -> String in
                defer { k = fresh }
                return k.issuer.key.kid
            }
            if previous != fresh.issuer.key.kid {
                _ = try? ledger.record(AuditEvent(client: "server", action: "keys.activated", subject: fresh.issuer.key.kid, result: "ok",
                                              reason: "replaces \(previous)"))
            }
            logger.log(.info, "signing keys reloaded", ["signing_kid": .string(fresh.issuer.key.kid), "verifying": .int(fresh.all.count)])
        } catch {
            logger.log(.error, "signing keys not reloaded; the previous keys stay in use", ["error": .string(error.description)])
        }
    }

    /// The JWKS body, rebuilt when a retired key's last token has expired.
    func jwks() -> Data {
        let now = Date()
        if let current = keys.withLock({ $0.jwksValidUntil > now ? $0.jwks : nil }) { return current }
        reloadKeys()
        return keys.withLock { $0.jwks }
    }

    func warnAboutDebugSecrets() {
        guard environment == .production, let names = try? ledger.debugSecretNames(), !names.isEmpty else { return }
        logger.log(.warning, "debug secrets exist but are refused in production; delete them with DELETE /v1/admin/debug-secrets/{name}",
                   ["count": .int(names.count)])
    }
}
