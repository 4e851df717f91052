/// Why an attestation or assertion was refused: a stable reason code, the step that found it, and a detail
/// for logs and support (never shown to decide anything).
public struct AppAttestFailure: Error, Equatable, CustomStringConvertible, Sendable {
    /// The refusal reasons; the raw value is the stable snake_case code clients and logs see.
    public enum Reason: String, Sendable, CaseIterable {
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

    public let reason: Reason
    public let step: VerificationStep
    public let detail: String

    public init(_ reason: Reason, at step: VerificationStep, _ detail: String) {
        self.reason = reason
        self.step = step
        self.detail = detail
    }

    /// The stable snake_case code (`bad_chain`, `nonce_mismatch`, …).
    public var code: String { reason.rawValue }

    public var description: String { "\(code) at step \(step.rawValue): \(detail)" }
}
