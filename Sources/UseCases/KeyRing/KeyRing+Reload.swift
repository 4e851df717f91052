import FoundationEssentials
import Ledger
public import TokenSigning

extension KeyRing {
    /// Re-reads the key directory (SIGHUP): the newest key starts signing, retired ones keep verifying.
    /// On failure the previous keys stay in use.
    public func reload() async throws(SigningKeyError) -> KeyReload {
        let all = try store.load()
        let newest = all.last!
        let previous = snapshot().issuer.key.kid
        if previous != newest.kid {
            // The ledger first: a key other replicas do not know as activated must not start signing here.
            do throws(StorageError) { try await ledger.recordKeyActivation(kid: newest.kid, at: Date()) } catch {
                throw .io("cannot record the activation of \(newest.kid) in the ledger: \(error.message)")
            }
            try store.recordActivation(of: newest)
        }
        let shared = self.shared.withLock { $0.activations }
        let fresh = Self.keys(all, signing: newest, store: store, settings: settings, shared: shared)
        keys.withLock { $0 = fresh }
        if previous != newest.kid {
            _ = try? await ledger.record(AuditEvent(client: "server", action: .keysActivated, subject: newest.kid, result: .ok,
                                                    reason: "replaces \(previous)"))
        }
        return KeyReload(signingKID: newest.kid, replacedKID: previous == newest.kid ? nil : previous, keyCount: fresh.all.count)
    }
}
