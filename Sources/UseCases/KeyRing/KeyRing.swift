public import FoundationEssentials
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
    let ledger: any KeyActivationStore & AuditLog
    let keys: Lock<Keys>
    /// Activation times recorded in the ledger by every server (with PostgreSQL, every replica), as last read,
    /// and whether a read is under way. Read off the request path, so the JWKS and verification never wait
    /// on storage (and keep working while it is down).
    let shared = Lock<(activations: [String: Date], refreshing: Bool)>(([:], false))

    /// Loads the directory; the newest key signs (its activation is recorded for the other servers).
    public init(settings: TokenSettings, ledger: any KeyActivationStore & AuditLog) throws(SigningKeyError) {
        self.settings = settings
        self.ledger = ledger
        let store = SigningKeyStore(directory: settings.keysDirectory)
        self.store = store
        let all = try store.load()
        try store.recordActivation(of: all.last!)
        keys = Lock(Self.keys(all, signing: all.last!, store: store, settings: settings, shared: [:]))
    }

    /// The signing key, the verifier and the JWKS for the keys in the directory. Activation times are the
    /// latest of this directory's `.activated` files and the ledger's `shared` ones.
    static func keys(_ all: [SigningKey], signing: SigningKey, store: SigningKeyStore, settings: TokenSettings,
                     shared: [String: Date], now: Date = Date()) -> Keys {
        let lifetime = settings.maxTokenLifetime
        let activations = store.activations().merging(shared, uniquingKeysWith: max)
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

    /// Recomputes which keys verify, keeping the signing key (only a reload or a restart changes that), and
    /// starts a read of the ledger's activation times for the next rebuild.
    private func refreshVerification() {
        rebuild()
        let start = shared.withLock { state -> Bool in
            guard !state.refreshing else { return false }
            state.refreshing = true
            return true
        }
        if start { Task { try? await self.readSharedActivations() } }
    }

    /// Rebuilds the keys from the directory and the shared activation times last read.
    func rebuild(signing: SigningKey? = nil) {
        let current = signing ?? snapshot().issuer.key
        guard let all = try? store.load() else { return }
        let fresh = Self.keys(all, signing: current, store: store, settings: settings, shared: shared.withLock { $0.activations })
        keys.withLock { $0 = fresh }
    }

    /// At start: records in the ledger that this server signs with its key, so that servers sharing the ledger
    /// but not this directory's `.activated` files (replicas on other machines) retire older keys on time.
    public func shareActivation() async throws(StorageError) {
        let signing = snapshot().issuer.key
        try await ledger.recordKeyActivation(kid: signing.kid, at: Date())
        try await readSharedActivations()
    }

    /// Reads the ledger's activation times and rebuilds the keys with them.
    func readSharedActivations() async throws(StorageError) {
        defer { shared.withLock { $0.refreshing = false } }
        let activations = try await ledger.keyActivations()
        shared.withLock { $0.activations = activations }
        rebuild()
    }
}
