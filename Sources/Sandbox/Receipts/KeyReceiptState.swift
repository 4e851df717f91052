import FoundationEssentials

/// What the sandbox's fraud service remembers of one App Attest key.
struct KeyReceiptState: Sendable {
    /// The latest attestation (on the App Attest clock); nil until attested.
    var attestedAt: Date?
    /// The latest attestation or refresh: Apple keeps a key's data 30 days after it.
    var lastSeen: Date?
    /// Field 3: the credential certificate of the attestation.
    var credentialCertificate: Data?
    /// Field 4 of the ATTEST receipt: the attestation's client data hash.
    var clientDataHash: Data?
    /// The latest receipt issued for the key (the attestation's, then each refresh's).
    var lastReceipt: Data?
}
