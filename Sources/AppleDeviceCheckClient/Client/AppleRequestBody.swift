import FoundationEssentials

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
    /// One buffer, sized up front: the token is copied once, not once per concatenation.
    func encoded() -> Data {
        var json = Data(capacity: deviceToken.utf8.count + 160)
        json.append(contentsOf: #"{"device_token":""#.utf8)
        json.append(contentsOf: deviceToken.utf8)
        json.append(contentsOf: #"","timestamp":"#.utf8)
        json.append(contentsOf: String(timestamp).utf8)
        json.append(contentsOf: #","transaction_id":""#.utf8)
        json.append(contentsOf: transactionID.utf8)
        json.append(0x22)
        if let bit0 { json.append(contentsOf: (bit0 ? #","bit0":true"# : #","bit0":false"#).utf8) }
        if let bit1 { json.append(contentsOf: (bit1 ? #","bit1":true"# : #","bit1":false"#).utf8) }
        json.append(0x7D)
        return json
    }
}
