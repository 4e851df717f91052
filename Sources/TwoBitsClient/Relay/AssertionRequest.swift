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

    public init(artifact: String, assertion: String, clientData: String, challenge: String, deviceToken: String? = nil,
                installID: String? = nil, limitedUse: Bool? = nil) {
        self.artifact = artifact
        self.assertion = assertion
        self.clientData = clientData
        self.challenge = challenge
        self.deviceToken = deviceToken
        self.installID = installID
        self.limitedUse = limitedUse
    }

    enum CodingKeys: String, CodingKey {
        case artifact, assertion, challenge
        case clientData = "client_data"
        case deviceToken = "device_token"
        case installID = "install_id"
        case limitedUse = "limited_use"
    }
}
