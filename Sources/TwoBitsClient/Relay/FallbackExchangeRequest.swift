/// The body of `POST /v1/fallback-tokens`.
public struct FallbackExchangeRequest: Sendable, Equatable, Codable {
    /// A fresh DeviceCheck token, standard base64 (exactly one of this and `debugSecret`).
    public var deviceToken: String?
    /// A development debug secret, for simulators (docs/fallback-tokens.md, section 5).
    public var debugSecret: String?
    public var installID: String?
    public var limitedUse: Bool?
    /// Why the strong tier was not used (`unsupported`, `throttled`, …). TwoBits refuses fields it does not
    /// know, and does not know this one yet: relays leave it out unless told otherwise
    /// (`URLSessionRelay.sendsAppAttestStatus`).
    public var appAttestStatus: AppAttestStatus?

    public init(deviceToken: String? = nil, debugSecret: String? = nil, installID: String? = nil, limitedUse: Bool? = nil,
                appAttestStatus: AppAttestStatus? = nil) {
        self.deviceToken = deviceToken
        self.debugSecret = debugSecret
        self.installID = installID
        self.limitedUse = limitedUse
        self.appAttestStatus = appAttestStatus
    }

    enum CodingKeys: String, CodingKey {
        case deviceToken = "device_token"
        case debugSecret = "debug_secret"
        case installID = "install_id"
        case limitedUse = "limited_use"
        case appAttestStatus = "app_attest_status"
    }
}
