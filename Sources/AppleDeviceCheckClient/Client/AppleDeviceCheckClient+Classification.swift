public import DeviceCheckModel
public import FoundationEssentials

extension AppleDeviceCheckClient {
    /// How the client reads one answer of Apple's: the query state, success, or the error class.
    /// Public for the fuzz checks (Tests/FuzzChecks), which see only public API.
    public static func classification(_ endpoint: AppleEndpoint, status: Int, body: Data) -> Result<QueryResult?, DeviceCheckError> {
        classify(endpoint, status: status, body: body)
    }
}
