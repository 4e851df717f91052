/// Why no response arrived.
public enum OutboundError: Error, Equatable, Sendable {
    /// The transfer did not finish within its timeout.
    case timedOut
    /// No connection could be made, or it broke before a whole response arrived.
    case connectionFailed(String)
    /// The client has been shut down.
    case shutDown
    /// The caller's task was cancelled; the transfer was taken out of curl (it may have been sent).
    case cancelled
}
