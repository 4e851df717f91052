/// Why Apple's verification steps refused an attestation or an assertion; the raw value is the stable
/// snake_case code clients and logs see (the `reason` of `attestation_invalid` / `assertion_invalid`).
public enum AppAttestFailureReason: String, Sendable, CaseIterable {
    case badFormat = "bad_format"
    case badChain = "bad_chain"
    case nonceMismatch = "nonce_mismatch"
    case keyIDMismatch = "key_id_mismatch"
    case rpIDMismatch = "rp_id_mismatch"
    case counterNotZero = "counter_not_zero"
    case aaguidMismatch = "aaguid_mismatch"
    case credentialIDMismatch = "credential_id_mismatch"
    case publicKeyMismatch = "public_key_mismatch"
    /// The attestation's ATTEST receipt fails Apple's receipt checks (signature, chain, type, app id, key, time).
    case receiptInvalid = "receipt_invalid"
    case badSignature = "bad_signature"
    case counterNotIncreasing = "counter_not_increasing"
}
