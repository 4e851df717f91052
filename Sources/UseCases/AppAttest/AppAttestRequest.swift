public import DeviceCheckModel
public import TokenSigning

/// What an attestation or assertion request carries besides the App Attest bytes.
public struct AppAttestRequest: Sendable {
    /// The key id as `generateKey` returned it (standard base64).
    public var keyID: String
    public var challenge: String
    /// A DeviceCheck token from the same device, whose bits are checked for a ban.
    public var deviceToken: DeviceToken?
    public var installID: String?
    public var limitedUse: Bool
    /// The session the token is bound to (claim `bnd`), when the app gave one.
    public var binding: SessionBinding?
    /// The API client asking (for the audit trail of pending bans applied).
    public var client: String

    public init(keyID: String, challenge: String, deviceToken: DeviceToken?, installID: String?, limitedUse: Bool, binding: SessionBinding? = nil, client: String) {
        self.keyID = keyID
        self.challenge = challenge
        self.deviceToken = deviceToken
        self.installID = installID
        self.limitedUse = limitedUse
        self.binding = binding
        self.client = client
    }
}
