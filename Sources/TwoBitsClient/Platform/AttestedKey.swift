/// The install's App Attest key as the key store keeps it.
public struct AttestedKey: Sendable, Equatable, Codable {
    /// What `generateKey` returned.
    public var keyID: String
    /// What TwoBits answered to the attestation; nil while the key awaits its attestation (kept so that an
    /// attestation Apple throttled is retried with the same key, as Apple asks).
    public var artifact: String?

    public init(keyID: String, artifact: String?) {
        self.keyID = keyID
        self.artifact = artifact
    }
}
