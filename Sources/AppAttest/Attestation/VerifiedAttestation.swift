public import FoundationEssentials

/// What a verified attestation establishes: the key to store, and what to keep beside it.
public struct VerifiedAttestation: Sendable, Equatable {
    /// SHA-256 of `publicKey`, as the app's `generateKey` returned it.
    public let keyID: Data
    /// The credential public key, 0x04 ‖ X ‖ Y (65 bytes): what assertions are verified with.
    public let publicKey: Data
    /// `attStmt.receipt` (PKCS#7, chained to Apple Root CA - G3), kept for fetching fresh receipts and the risk metric.
    public let receipt: Data
    public let environment: AppAttestEnvironment
    public let appID: AppID
    /// From iOS 27's extensions, when present.
    public let validationCategory: ValidationCategory?
    public let bundleVersion: String?
    /// Always 0 for an attestation; the first assertion must exceed it.
    public let counter: UInt32
}
