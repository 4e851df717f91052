/// Why a DeviceCheck call produced no usable answer, in three classes that callers treat differently.
public enum DeviceCheckError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Apple says the device token is missing, malformed or unknown (400 with the device-token body),
    /// or it comes from a build of the other environment: Apple answers those with the authorization
    /// body, which counts as this case when Apple has accepted the very same developer JWT before.
    /// The client's fault: answer 400.
    case invalidDeviceToken
    /// Apple rejected our credentials, environment or request (400 authorization body for a developer
    /// JWT never accepted, 401 after one re-sign, 403, other 4xx). An operator must act: answer 502 and log loudly.
    case rejected(status: Int, body: String)
    /// No trustworthy answer (429, 5xx, timeout, connection or TLS failure, unparseable 200, too many calls
    /// waiting). Never read as "device is clear": answer 503 with Retry-After.
    case unavailable(TransientFailure)

    public var description: String {
        switch self {
        case .invalidDeviceToken: return "Apple rejected the device token"
        case .rejected(let status, let body): return "Apple rejected our request (\(status) \(body.prefix(120)))"
        case .unavailable(let failure): return "Apple unavailable: \(failure)"
        }
    }
}

/// The transient failures; retried with backoff inside the call's deadline before they surface.
public enum TransientFailure: Sendable, Equatable, CustomStringConvertible {
    case throttled
    case serverError(Int)
    case timedOut
    case connectionFailed(String)
    /// The TLS handshake with Apple's host failed (a certificate refused, or no answer to the handshake in
    /// time): the request was never sent. Carries curl's reason.
    case tlsFailed(String)
    case unparseable(String)
    /// The cap on calls in flight was reached and no slot freed up within the deadline.
    case overloaded
    /// An update whose outcome is not known: an attempt timed out, lost its connection or got an answer
    /// other than Apple's documented success (a 200 with a body), so Apple may or may not have written
    /// the bits. Carries the last attempt's failure. Never read as "not written".
    indirect case outcomeUnknown(TransientFailure)

    /// A label for metrics.
    public var label: String {
        switch self {
        case .throttled: return "throttled"
        case .serverError: return "server_error"
        case .timedOut: return "timeout"
        case .connectionFailed: return "connection_failed"
        case .tlsFailed: return "tls_failed"
        case .unparseable: return "unparseable"
        case .overloaded: return "overloaded"
        case .outcomeUnknown: return "outcome_unknown"
        }
    }

    public var description: String {
        switch self {
        case .serverError(let s): return "server error \(s)"
        case .connectionFailed(let m): return "connection failed: \(m)"
        case .tlsFailed(let m): return "TLS failed: \(m)"
        case .unparseable(let m): return "unparseable answer: \(m)"
        case .outcomeUnknown(let last): return "outcome unknown (the update may have been written): \(last)"
        default: return label
        }
    }
}
