/// One update Apple accepted (200 and the bits written), as the write log keeps it.
public struct SandboxWrite: Sendable, Equatable, Codable {
    /// 1 for the first accepted update, then one more per update; never reused.
    public let sequence: Int
    /// When the bits were written, milliseconds since the epoch (the sandbox's clock).
    public let atMilliseconds: Int64
    public let deviceID: String
    /// The bits the request carried; nil when it left one out (the device's bit was kept).
    public let bit0: Bool?
    public let bit1: Bool?
    /// The request's `transaction_id`, as Apple's API carries it.
    public let transactionID: String

    public init(sequence: Int, atMilliseconds: Int64, deviceID: String, bit0: Bool?, bit1: Bool?, transactionID: String) {
        self.sequence = sequence
        self.atMilliseconds = atMilliseconds
        self.deviceID = deviceID
        self.bit0 = bit0
        self.bit1 = bit1
        self.transactionID = transactionID
    }

    enum CodingKeys: String, CodingKey {
        case sequence, bit0, bit1
        case atMilliseconds = "at_ms"
        case deviceID = "device_id"
        case transactionID = "transaction_id"
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(sequence, forKey: .sequence)
        try c.encode(atMilliseconds, forKey: .atMilliseconds)
        try c.encode(deviceID, forKey: .deviceID)
        try c.encode(bit0, forKey: .bit0) // null when the update left it out
        try c.encode(bit1, forKey: .bit1)
        try c.encode(transactionID, forKey: .transactionID)
    }
}
