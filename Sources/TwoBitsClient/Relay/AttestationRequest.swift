/// The body of `POST /v1/app-attest/attestations`.
public struct AttestationRequest: Sendable, Equatable, Codable {
    /// What `generateKey` returned (standard base64).
    public var keyID: String
    /// The attestation object, standard base64.
    public var attestationObject: String
    /// The challenge whose SHA-256 the attestation signed.
    public var challenge: String
    /// A fresh DeviceCheck token, when the client attaches one (bans hold in every tier).
    public var deviceToken: String?
    public var installID: String?
    public var limitedUse: Bool?
    /// The user's session the token is bound to (`bnd`). The client leaves it nil: the main API sets it from
    /// the session it authenticated (docs/client.md, "Wiring the relay").
    public var binding: String?

    public init(keyID: String, attestationObject: String, challenge: String, deviceToken: String? = nil,
                installID: String? = nil, limitedUse: Bool? = nil, binding: String? = nil) {
        self.keyID = keyID
        self.attestationObject = attestationObject
        self.challenge = challenge
        self.deviceToken = deviceToken
        self.installID = installID
        self.limitedUse = limitedUse
        self.binding = binding
    }

    enum CodingKeys: String, CodingKey {
        case challenge, binding
        case keyID = "key_id"
        case attestationObject = "attestation_object"
        case deviceToken = "device_token"
        case installID = "install_id"
        case limitedUse = "limited_use"
    }
}
