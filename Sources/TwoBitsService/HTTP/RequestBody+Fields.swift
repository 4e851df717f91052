import DeviceCheck
import TokenSigning
import UseCases

extension RequestBody {
    /// `device_token` as a `DeviceToken`: 400 bad_request when absent, not a string or over the
    /// documented length, 400 invalid_device_token when it is not base64 (Apple would refuse it anyway).
    func deviceToken(_ field: String = "device_token") throws(APIError) -> DeviceToken {
        let text = try string(field)
        guard text.utf8.count <= DeviceToken.maxLength else { throw .badRequest("\(field) is limited to \(DeviceToken.maxLength) characters") }
        guard let token = DeviceToken(text) else { throw .invalidDeviceToken }
        return token
    }

    /// An optional `install_id`: 1-128 characters of A-Z a-z 0-9 . _ -
    func installID() throws(APIError) -> String? {
        guard let id = try optionalString("install_id") else { return nil }
        guard Self.isInstallID(id) else { throw .badRequest("install_id must be 1-128 characters of A-Z a-z 0-9 . _ -") }
        return id
    }

    /// An optional `binding` (the user's session id or OAuth token, as the main API sees it): 1-1,024 bytes
    /// of UTF-8. Never echoed in the error: it is a credential.
    func binding() throws(APIError) -> SessionBinding? {
        guard let value = try optionalString("binding") else { return nil }
        guard let binding = SessionBinding(value) else {
            throw .badRequest("binding must be 1-\(SessionBinding.maxBytes) bytes of UTF-8 (the session id or OAuth token)")
        }
        return binding
    }

    /// An optional `app_attest_status`: why the app used the DeviceCheck tier, one of the documented reasons.
    func appAttestStatus() throws(APIError) -> AppAttestFallbackReason? {
        guard let value = try optionalString("app_attest_status") else { return nil }
        guard let reason = AppAttestFallbackReason(rawValue: value) else {
            throw .badRequest("app_attest_status must be one of " + AppAttestFallbackReason.allCases.map(\.rawValue).joined(separator: ", "))
        }
        return reason
    }

    static func isInstallID(_ id: String) -> Bool {
        (1...128).contains(id.utf8.count) && id.utf8.allSatisfy {
            ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A) || $0 == 0x2E || $0 == 0x5F || $0 == 0x2D
        }
    }

    /// The longest `reason`, in Unicode code points, as JSON Schema's `maxLength` counts them. Code points,
    /// not Swift characters: 30,000 combining marks are one character but 60 KB; 500 code points are at
    /// most 2,000 bytes of UTF-8, which bounds what one audit event stores.
    static let maxReasonCodePoints = 500

    /// A free-text `reason` of at most 500 code points, without control characters (C0, DEL): a NUL
    /// would cut it in storage, escapes would reach an admin's terminal.
    func reason(required: Bool) throws(APIError) -> String? {
        guard let reason = try optionalString("reason"), !reason.isEmpty else {
            if required { throw .badRequest("reason is required (why this device is banned, for the audit trail)") }
            return nil
        }
        guard reason.unicodeScalars.count <= Self.maxReasonCodePoints else {
            throw .badRequest("reason is limited to \(Self.maxReasonCodePoints) characters (Unicode code points)")
        }
        guard !reason.unicodeScalars.contains(where: Self.isControl) else {
            throw .badRequest("reason must not contain control characters (U+0000-U+001F, U+007F)")
        }
        return reason
    }

    static func isControl(_ scalar: Unicode.Scalar) -> Bool { scalar.value < 0x20 || scalar.value == 0x7F }
}
