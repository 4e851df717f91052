public import FoundationEssentials

/// What a verified receipt says (field numbers as in Apple's "Assessing fraud risk").
public struct VerifiedReceipt: Sendable, Equatable {
    /// Field 6.
    public let type: ReceiptType
    /// Field 2, "TEAMID.bundle.id".
    public let appID: String
    /// Field 7 (undocumented): "sandbox" or "production".
    public let environment: String?
    /// Field 12.
    public let creation: Date
    /// Field 19; RECEIPT only: Apple answers 304 to a refresh before it.
    public let notBefore: Date?
    /// Field 21.
    public let expiration: Date
    /// Field 17; RECEIPT only: the attested keys of the device for this app over the past 30 days.
    public let riskMetric: Int?
    /// Field 5: the same for every receipt of a key.
    public let token: String
    /// Field 4: the 32-byte client data hash in an ATTEST receipt; a mangled longer copy in a RECEIPT.
    public let clientHash: Data
    /// Field 3: the DER of the attested key's credential certificate.
    public let attestedCertificate: Data
    /// The key of field 3's certificate, 0x04 ‖ X ‖ Y (65 bytes).
    public let attestedPublicKey: Data
}
