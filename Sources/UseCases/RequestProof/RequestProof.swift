public import DeviceCheckModel
public import FoundationEssentials

/// A request proof as the main API forwards it: the three values the app sent in its headers, and what the main
/// API itself saw of the request (never the app's claim of it).
public struct RequestProof: Sendable {
    /// `TwoBits-Proof-Key`: the key's artifact (`aa1.…`), as the attestation answered it.
    public var artifact: String
    /// `TwoBits-Proof-Client-Data`, decoded: the JSON the app signed.
    public var clientData: Data
    /// `TwoBits-Proof-Assertion`, decoded: what `generateAssertion` returned over SHA-256(clientData).
    public var assertion: Data
    /// The request as the main API received it, body digest computed by the main API.
    public var received: BoundRequest
    /// A DeviceCheck token of the same device, whose bits are checked for a ban.
    public var deviceToken: DeviceToken?
    public var installID: String?
    /// The API client asking (for the audit trail).
    public var client: String

    public init(artifact: String, clientData: Data, assertion: Data, received: BoundRequest, deviceToken: DeviceToken? = nil,
                installID: String? = nil, client: String) {
        self.artifact = artifact
        self.clientData = clientData
        self.assertion = assertion
        self.received = received
        self.deviceToken = deviceToken
        self.installID = installID
        self.client = client
    }
}
