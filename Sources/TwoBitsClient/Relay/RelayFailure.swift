/// Why a relay call gave no answer the flow can use.
public enum RelayFailure: Error, Sendable, Equatable {
    /// TwoBits (or the main API in front of it) answered an error: its HTTP status, the envelope's `code`,
    /// its `reason` when there is one (App Attest refusals), and `Retry-After` in seconds when sent.
    case refused(status: Int, code: String, reason: String? = nil, retryAfterSeconds: Int? = nil)
    /// No answer: no connection, a timeout, a dropped connection.
    case unreachable(String)
    /// An answer that is not what TwoBits sends (not JSON, a field missing).
    case malformedAnswer(String)
}
