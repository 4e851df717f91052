public import FoundationEssentials

/// The answer a client got for a final claim verdict, exactly as the transport sent it: stored under the
/// `Idempotency-Key` and replayed byte for byte. `status` is the transport's own code, opaque here (the
/// ledger stores it beside the body).
public struct RecordedAnswer: Sendable, Equatable {
    public let status: Int
    public let body: Data

    public init(status: Int, body: Data) {
        self.status = status
        self.body = body
    }
}
