public import FoundationEssentials

/// Replay protection: device tokens and token ids used once within their windows.
public protocol ReplayGuard: Sendable {
    /// True the first time a device-token digest is seen within its window; false on reuse.
    func rememberDeviceToken(digest: String, until: Date, now: Date) async throws(StorageError) -> Bool
    /// Forgets a digest whose exchange failed for a transient reason, so the client can retry.
    func forgetDeviceToken(digest: String) async throws(StorageError)
    /// True for the first consume of a token id; false when already consumed.
    func consumeTokenID(_ jti: String, until: Date, now: Date) async throws(StorageError) -> Bool
}
