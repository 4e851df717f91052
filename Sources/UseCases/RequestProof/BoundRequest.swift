public import WireVocabulary

/// What a request proof binds: the request's HTTP method, its path with the query (the request target as sent,
/// percent-encoding unchanged), and the base64url (unpadded) SHA-256 of its exact body bytes. The app signs one
/// (in the proof's client data); the main API reports the one it received; they must be equal field by field.
public struct BoundRequest: Sendable, Equatable {
    /// As sent, case and all (`POST`): HTTP methods are case-sensitive.
    public let method: String
    /// From the first `/`, with the query: `/v1/payouts?x=1`.
    public let path: String
    /// Base64url without padding of the SHA-256 of the body (of zero bytes for an empty one).
    public let bodySHA256: String

    public init(method: String, path: String, bodySHA256: String) {
        self.method = method
        self.path = path
        self.bodySHA256 = bodySHA256
    }

    /// Why `signed` (what the app signed) is not this request (what the main API received), naming the first
    /// field that differs in the order method, path, body; nil when they are the same request. Exact
    /// comparisons: a normalised path or method would let one proof serve two requests the main API tells apart.
    public func mismatch(signed: BoundRequest) -> RequestProofRefusalReason? {
        if signed.method != method { return .methodMismatch }
        if signed.path != path { return .pathMismatch }
        if signed.bodySHA256 != bodySHA256 { return .payloadMismatch }
        return nil
    }
}
