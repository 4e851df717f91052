/// A failure the sandbox plays instead of answering, for the next `count` calls.
public struct Fault: Sendable, Equatable, Codable {
    public enum Kind: String, Sendable, Codable {
        /// Answer with `status` (and Apple-like empty or given body).
        case status
        /// Hold the call for `delay_ms`, then answer 503: the client's timeout fires first.
        case timeout
        /// Close the connection without answering.
        case drop
    }

    public var kind: Kind
    public var status: Int?
    public var body: String?
    public var count: Int
    /// Limits the fault to one endpoint ("validate_device_token", "query_two_bits", "update_two_bits").
    public var endpoint: String?
    public var delayMilliseconds: Int?
    /// When true the call takes effect first (an update is written) and the fault is played after:
    /// Apple wrote, but the client sees a timeout, a dropped connection or the given answer.
    public var apply: Bool?

    public init(kind: Kind, status: Int? = nil, body: String? = nil, count: Int = 1, endpoint: String? = nil, delayMilliseconds: Int? = nil,
                apply: Bool? = nil) {
        self.kind = kind
        self.status = status
        self.body = body
        self.count = count
        self.endpoint = endpoint
        self.delayMilliseconds = delayMilliseconds
        self.apply = apply
    }

    enum CodingKeys: String, CodingKey {
        case kind, status, body, count, endpoint, apply
        case delayMilliseconds = "delay_ms"
    }
}
