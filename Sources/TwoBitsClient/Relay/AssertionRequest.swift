/// The body of `POST /v1/app-attest/assertions`.
public struct AssertionRequest: Sendable, Equatable, Codable {
    /// The key's artifact, from its attestation's answer.
    public var artifact: String
    /// What `generateAssertion` returned, standard base64.
    public var assertion: String
    /// The signed client data (JSON with `challenge`), standard base64.
    public var clientData: String
    public var challenge: String
    public var deviceToken: String?
    public var installID: String?
    public var limitedUse: Bool?
    /// The user's session the token is bound to (`bnd`). The client leaves it nil: the main API sets it from
    /// the session it authenticated (docs/client.md, "Wiring the relay").
    public var binding: String?

    public init(artifact: String, assertion: String, clientData: String, challenge: String, deviceToken: String? = nil,
                installID: String? = nil, limitedUse: Bool? = nil, binding: String? = nil) {
        self.artifact = artifact
        self.assertion = assertion
        self.clientData = clientData
        self.challenge = challenge
        self.deviceToken = deviceToken
        self.installID = installID
        self.limitedUse = limitedUse
        self.binding = binding
    }

    enum CodingKeys: String, CodingKey {
        case artifact, assertion, challenge, binding
        case clientData = "client_data"
        case deviceToken = "device_token"
        case installID = "install_id"
        case limitedUse = "limited_use"
    }
}
