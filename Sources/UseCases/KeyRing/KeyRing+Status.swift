import FoundationEssentials

extension KeyRing {
    /// Every key of the directory, oldest first, for the admin console.
    public func statuses() -> [SigningKeyStatus] {
        let keys = snapshot()
        let activations = store.activations().merging(shared.withLock { $0.activations }, uniquingKeysWith: max)
        return keys.all.map { key in
            SigningKeyStatus(kid: key.kid, signing: key.kid == keys.issuer.key.kid, createdAt: key.createdAt, activatedAt: activations[key.kid])
        }
    }
}
