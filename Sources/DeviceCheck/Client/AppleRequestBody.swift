import Foundation

/// The JSON body of every DeviceCheck call, field names exactly as Apple spells them.
struct AppleRequestBody {
    /// Validated base64 (`DeviceToken`): no character needs escaping in JSON.
    let deviceToken: String
    /// A UUID: no character needs escaping either.
    let transactionID: String
    /// UTC milliseconds since the epoch (seconds here is a known bug in other clients).
    let timestamp: Int64
    let bit0: Bool?
    let bit1: Bool?

    /// The body, written directly: the token is 3 KB and a general JSON encoder would scan it for
    /// characters to escape that base64 cannot contain. Update always carries both bits.
    func encoded() -> Data {
        var json = #"{"device_token":""# + deviceToken + #"","timestamp":"# + String(timestamp)
            + #","transaction_id":""# + transactionID + "\""
        if let bit0 { json += #","bit0":"# + (bit0 ? "true" : "false") }
        if let bit1 { json += #","bit1":"# + (bit1 ? "true" : "false") }
        json += "}"
        return Data(json.utf8)
    }
}
