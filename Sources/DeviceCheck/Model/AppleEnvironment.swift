/// Apple's two DeviceCheck hosts. They keep separate bit state; Xcode builds produce development tokens.
public enum AppleEnvironment: String, Sendable, Codable, CaseIterable {
    case production
    case development

    public var baseURL: String {
        switch self {
        case .production: return "https://api.devicecheck.apple.com"
        case .development: return "https://api.development.devicecheck.apple.com"
        }
    }
}

/// The three endpoints, by the last path component Apple uses.
public enum AppleEndpoint: String, Sendable, CaseIterable {
    case validate = "validate_device_token"
    case query = "query_two_bits"
    case update = "update_two_bits"

    public var path: String { "/v1/" + rawValue }
}
