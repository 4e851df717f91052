import Foundation

/// The JSON body of every DeviceCheck call, field names exactly as Apple spells them.
struct AppleRequestBody: Encodable {
    let deviceToken: String
    let transactionID: String
    /// UTC milliseconds since the epoch (seconds here is a known bug in other clients).
    let timestamp: Int64
    let bit0: Bool?
    let bit1: Bool?

    enum CodingKeys: String, CodingKey {
        case deviceToken = "device_token"
        case transactionID = "transaction_id"
        case timestamp
        case bit0
        case bit1
    }

    func encoded() -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // encodeIfPresent leaves bits out of validate and query; update always carries both.
        return (try? encoder.encode(self)) ?? Data()
    }
}
