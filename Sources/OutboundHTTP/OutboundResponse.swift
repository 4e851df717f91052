public import FoundationEssentials

/// The status and body of a completed exchange.
public struct OutboundResponse: Sendable {
    public let status: Int
    public let body: Data
    public var text: String { String(decoding: body, as: UTF8.self) }

    public init(status: Int, body: Data) {
        self.status = status
        self.body = body
    }
}
