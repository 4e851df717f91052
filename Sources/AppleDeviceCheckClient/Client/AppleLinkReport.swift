/// What one authenticated call to Apple said about the link and the credentials (`twobits apple-check`).
public struct AppleLinkReport: Sendable {
    /// What Apple (or the path to it) made of the call.
    public enum Verdict: Sendable, Equatable {
        /// Apple read the developer token and refused only the device token, as it must a made-up one.
        case accepted
        /// Apple refused the credentials (team id, key id, the key, or the environment's host).
        case refused(status: Int, body: String)
        /// An answer that says nothing of the credentials (429, 5xx, anything else).
        case inconclusive(status: Int, body: String)
        /// No answer: curl's reason (TLS refused, no route, timed out).
        case unreachable(String)
    }

    public let url: String
    public let verdict: Verdict
    /// The TLS version and cipher, when an answer came over https.
    public let tls: String?
    /// "HTTP/2" or "HTTP/1.1", when an answer came.
    public let httpVersion: String?
    public let milliseconds: Int
}
