public import WireVocabulary

/// What a request proof's verification decided: serve the request, or refuse it for a reason.
public enum RequestProofVerdict: Sendable, Equatable {
    /// Signed by the key for exactly this request, once: the challenge is used and the counter moved.
    case valid(ProvenRequest)
    /// Not to be served. Nothing was written (but for the audit event of a proof the key signed).
    case refused(RequestProofRefusalReason)
}
