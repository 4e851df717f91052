import Ledger
public import TokenSigning

extension KeyRing {
    /// Re-reads the key directory (SIGHUP): the newest key starts signing, retired ones keep verifying.
    /// On failure the previous keys stay in use.
    public func reload() async throws(SigningKeyError) -> KeyReload {
        let all = try store.load()
        let newest = all.last!
        let previous = snapshot().issuer.key.kid
        if previous != newest.kid { try store.recordActivation(of: newest) }
        let fresh = Self.keys(all, signing: newest, store: store, settings: settings)
        keys.withLock { $0 = fresh }
        if previous != newest.kid {
            _ = try? await ledger.record(AuditEvent(client: "server", action: .keysActivated, subject: newest.kid, result: "ok",
                                                    reason: "replaces \(previous)"))
        }
        return KeyReload(signingKID: newest.kid, replacedKID: previous == newest.kid ? nil : previous, keyCount: fresh.all.count)
    }
}
