/// Names of the JSON fields both sides of the wire read by hand (the error envelope and its details).
public enum WireField {
    /// The envelope's one member: `{"error":{…}}`.
    public static let error = "error"
    public static let code = "code"
    public static let message = "message"
    /// The App Attest refusal's `AppAttestRefusalReason`.
    public static let reason = "reason"
    /// With `already_claimed`: the month of the claim.
    public static let claimedMonth = "claimed_month"
    /// The fallback exchange's `AppAttestFallbackReason`.
    public static let appAttestStatus = "app_attest_status"
}
