/// The three endpoints, by the last path component Apple uses.
public enum AppleEndpoint: String, Sendable, CaseIterable {
    case validate = "validate_device_token"
    case query = "query_two_bits"
    case update = "update_two_bits"

    public var path: String { "/v1/" + rawValue }
}
