extension AppleEnvironment {
    /// The DeviceCheck host of this environment.
    public var baseURL: String {
        switch self {
        case .production: return "https://api.devicecheck.apple.com"
        case .development: return "https://api.development.devicecheck.apple.com"
        }
    }

    /// The host of App Attest's fraud-metric service (`POST /v1/attestationData`) for the same environment.
    public var appAttestDataBaseURL: String {
        switch self {
        case .production: return "https://data.appattest.apple.com"
        case .development: return "https://data-development.appattest.apple.com"
        }
    }
}
