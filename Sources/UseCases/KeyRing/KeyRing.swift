public import Foundation
public import Ledger
import Locking
public import TokenSigning

/// The fallback-token keys of `tokens.keys_dir`: the one that signs, those that verify, and the JWKS
/// that publishes them. The key this server signs with always verifies, even when another server has moved on.
public final class KeyRing: Sendable {
    /// One consistent view of the keys.
    struct Keys {
        var issuer: TokenIssuer
        var verifier: TokenVerifier
        var jwks: Data
        /// When a retired key leaves the JWKS, the document must be rebuilt.
        var jwksValidUntil: Date
        var all: [SigningKey]
    }

    let settings: TokenSettings
    let store: SigningKeyStore
    let ledger: any Ledger
    let keys: Lock<Keys>

    /// Loads the directory; the newest key signs (its activation is recorded for the other servers).
    public init(settings: TokenSettings, ledger: any Ledger) throws(SigningKeyError) {
        self.settings = settings
        self.ledger = ledger
        let store = SigningKeyStore(directory: settings.keysDirectory)
        self.store = store
        let all = try store.load()
        try store.recordActivation(of: all.last!)
        keys = Lock(Self.keys(all, signing: all.last!, store: store, settings: settings))
    }

    /// The signing key, the verifier and the JWKS for the keys in the directory.
    static func keys(_ all: [SigningKey], signing: SigningKey, store: SigningKeyStore, settings: TokenSettings, now: Date = Date()) -> Keys {
        let lifetime = settings.maxTokenLifetime
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

    func snapshot() -> Keys { keys.withLock { $0 } }

    /// Whether the signing key file is still in place (readiness).
    public var hasSigningKey: Bool { FileManager.default.fileExists(atPath: snapshot().issuer.key.path) }

    /// The issuer signing with the current key.
    public func issuer() -> TokenIssuer { snapshot().issuer }

    /// The JWKS document, rebuilt when a retired key's last token has expired or a minute has passed.
    public func jwks() -> Data {
        let now = Date()
        if let current = keys.withLock({ $0.jwksValidUntil > now ? $0.jwks : nil }) { return current }
        refreshVerification()
        return keys.withLock { $0.jwks }
    }

    /// The verifier, refreshed like the JWKS.
    public func verifier() -> TokenVerifier {
        if keys.withLock({ $0.jwksValidUntil <= Date() }) { refreshVerification() }
        return snapshot().verifier
    }

    /// Recomputes which keys verify, keeping the signing key (only a reload or a restart changes that).
    private func refreshVerification() {
        let current = snapshot().issuer.key
        guard let all = try? store.load() else { return }
        let fresh = Self.keys(all, signing: current, store: store, settings: settings)
        keys.withLock { $0 = fresh }
    }
}
