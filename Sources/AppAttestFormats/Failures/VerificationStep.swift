/// One step of Apple's verification, in the order the verifiers run them.
public enum VerificationStep: String, Sendable, CaseIterable {
    case decode
    case format
    case chain
    case nonce
    case keyID = "key_id"
    case rpID = "rp_id"
    case counter
    case aaguid
    case credentialID = "credential_id"
    case publicKey = "public_key"
    /// The attestation's ATTEST receipt (run by the server; the offline command leaves it out).
    case receipt
    case signature

    /// The attestation steps, in order.
    public static let attestation: [VerificationStep] = [.decode, .format, .chain, .nonce, .keyID, .rpID, .counter, .aaguid, .credentialID, .publicKey]
    /// The assertion steps, in order.
    public static let assertion: [VerificationStep] = [.decode, .signature, .rpID, .counter]

    /// What the step checks, for people reading the offline command's output.
    public var summary: String {
        switch self {
        case .decode: return "CBOR decode and authenticator data layout"
        case .format: return "fmt is apple-appattest, attStmt has x5c and receipt"
        case .chain: return "x5c chains to the App Attestation root at the verification time"
        case .nonce: return "SHA-256(authData || clientDataHash) equals the credential certificate's 1.2.840.113635.100.8.2"
        case .keyID: return "SHA-256 of the credential public key equals the key id"
        case .rpID: return "RP ID hash is SHA-256 of a configured app id"
        case .counter: return "counter is 0 (attestation) or above the stored one (assertion)"
        case .aaguid: return "AAGUID matches the environment"
        case .credentialID: return "credential id equals the key id"
        case .publicKey: return "COSE key in authData equals the certificate's key"
        case .receipt: return "attStmt.receipt is an ATTEST receipt for the app id and this key, chained to the receipt root, created within the challenge's window"
        case .signature: return "ECDSA signature over SHA-256(authenticatorData || SHA-256(clientData))"
        }
    }
}
