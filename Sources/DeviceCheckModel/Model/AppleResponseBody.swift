/// Apple's literal response bodies, as recorded on the wire (see docs/ and the shared reference).
public enum AppleResponseBody {
    public static let bitStateNotFound = "Failed to find bit state"
    /// The wording of Apple's documentation page for the same case; accepted too.
    public static let bitStateNotFoundDocumented = "Bit State Not Found"
    public static let badDeviceToken = "Missing or incorrectly formatted device token payload"
    public static let badAuthorizationToken = "Missing or badly formatted authorization token"
    public static let unverifiedAuthorizationToken = "Unable to verify authorization token"
    public static let expiredAuthorizationToken = "Authorization Token Expired"
    public static let badBits = "Missing or incorrectly formatted bits"
    public static let badTimestamp = "Missing or incorrectly formatted time stamp"
    public static let methodNotAllowed = "Method Not Allowed"
    /// `attestationData`'s 400 for a receipt of the other environment.
    public static let incorrectEnvironment = "Incorrect Environment"
    /// `attestationData`'s 400 for a missing or malformed receipt body.
    public static let badPayload = "Bad Payload"
}
