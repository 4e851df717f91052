public import DeviceDomain
public import FoundationEssentials

/// An App Attest key TwoBits has verified the attestation of: what assertions are checked against.
/// Holds the public key and Apple's receipt, never anything secret.
public struct AppAttestKeyRecord: Sendable, Equatable {
    /// The key id as the device's `generateKey` returned it (standard base64 of SHA-256 of the public key).
    public var keyID: String
    /// The credential public key, 0x04 ‖ X ‖ Y (65 bytes).
    public var publicKey: Data
    /// The highest assertion counter accepted (0 after the attestation).
    public var counter: UInt32
    /// Apple's attestation receipt, kept for fetching fresh receipts and the risk metric later.
    public var receipt: Data
    /// The key's environment, from the AAGUID (stored as its raw value).
    public var environment: AppleEnvironment
    /// "TEAMID.bundle.id".
    public var appID: String
    /// The iOS 27 validation category, when the device sent one.
    public var validationCategory: Int?
    public var firstSeen: Date
    public var revokedAt: Date?
    public var revokedReason: String?
    /// The latest risk metric Apple sent for the key (`AppAttestReceiptState`); nil while unknown.
    public var riskMetric: Int?

    public init(keyID: String, publicKey: Data, counter: UInt32 = 0, receipt: Data, environment: AppleEnvironment, appID: String,
                validationCategory: Int? = nil, firstSeen: Date, revokedAt: Date? = nil, revokedReason: String? = nil, riskMetric: Int? = nil) {
        self.keyID = keyID
        self.publicKey = publicKey
        self.counter = counter
        self.receipt = receipt
        self.environment = environment
        self.appID = appID
        self.validationCategory = validationCategory
        self.firstSeen = firstSeen
        self.revokedAt = revokedAt
        self.revokedReason = revokedReason
        self.riskMetric = riskMetric
    }

    public var isRevoked: Bool { revokedAt != nil }
}
