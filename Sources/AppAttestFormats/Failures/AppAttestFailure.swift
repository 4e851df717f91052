public import WireVocabulary

/// Why an attestation or assertion was refused: a stable reason code, the step that found it, and a detail
/// for logs and support (never shown to decide anything).
public struct AppAttestFailure: Error, Equatable, CustomStringConvertible, Sendable {
    /// The refusal reasons (their raw value the stable snake_case code clients and logs see), spelled in the
    /// wire's vocabulary, which the client library shares.
    public typealias Reason = AppAttestFailureReason

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
