package import FoundationEssentials

/// The certificate extensions of App Attest's two chains, named once for the verifiers that read them and the
/// sandbox that issues them.
public enum AppAttestCertificateExtension {
    /// The credential certificate's nonce, SHA-256(authData ‖ clientDataHash).
    public static let nonceOID = "1.2.840.113635.100.8.2"
    /// The DER around the nonce in that extension: SEQUENCE { [1] { OCTET STRING (32) } }.
    package static let noncePrefix = Data([0x30, 0x24, 0xA1, 0x22, 0x04, 0x20])
    /// The extension marking Apple's receipt signing certificates (`Application Attestation Fraud Receipt Signing`).
    public static let receiptSignerOID = "1.2.840.113635.100.12.15"
}
