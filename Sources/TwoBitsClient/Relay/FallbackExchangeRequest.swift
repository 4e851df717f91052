/// The body of `POST /v1/fallback-tokens`.
public struct FallbackExchangeRequest: Sendable, Equatable, Codable {
    /// A fresh DeviceCheck token, standard base64 (exactly one of this and `debugSecret`).
    public var deviceToken: String?
    /// A development debug secret, for simulators (docs/fallback-tokens.md, section 5).
    public var debugSecret: String?
    public var installID: String?
    public var limitedUse: Bool?
    /// Why the strong tier was not used (`unsupported`, `throttled`, …): TwoBits counts it (the adoption
    /// signal, docs/fallback-tokens.md). The client always sets it; relays forward it.
    public var appAttestStatus: AppAttestStatus?
    /// The user's session the token is bound to (`bnd`), 1-1,024 bytes. The client leaves it nil: the main API
    /// sets it from the session it authenticated (docs/client.md, "Wiring the relay").
    public var binding: String?

    public init(deviceToken: String? = nil, debugSecret: String? = nil, installID: String? = nil, limitedUse: Bool? = nil,
                appAttestStatus: AppAttestStatus? = nil, binding: String? = nil) {
        self.deviceToken = deviceToken
        self.debugSecret = debugSecret
        self.installID = installID
        self.limitedUse = limitedUse
        self.appAttestStatus = appAttestStatus
        self.binding = binding
    }

    enum CodingKeys: String, CodingKey {
        case binding
        case deviceToken = "device_token"
        case debugSecret = "debug_secret"
        case installID = "install_id"
        case limitedUse = "limited_use"
        case appAttestStatus = "app_attest_status"
    }
}
