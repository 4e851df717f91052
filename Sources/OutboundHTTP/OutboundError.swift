/// Why no response arrived.
public enum OutboundError: Error, Equatable, Sendable {
    /// The transfer did not finish within its timeout.
    case timedOut
    /// No connection could be made, or it broke before a whole response arrived.
    case connectionFailed(String)
    /// The TLS handshake failed (a certificate refused, no common protocol, or no answer to the handshake in
    /// time): the request was never sent. Carries curl's reason.
    case tlsFailed(String)
    /// The call waited for an HTTP/2 stream (or for the connection being opened to the host) until its timeout
    /// passed: nothing was sent.
    case noStream
    /// The client has been shut down.
    case shutDown
    /// The caller's task was cancelled; the transfer was taken out of curl (it may have been sent).
    case cancelled
}
