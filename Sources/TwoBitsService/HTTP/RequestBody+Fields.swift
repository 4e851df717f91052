import DeviceCheckModel
import TokenSigning
import UseCases
import WireVocabulary

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

    /// A free-text `reason` of at most 500 code points, without control characters (C0, DEL, C1), format
    /// characters (bidi controls, U+00AD, U+200B, U+FEFF, ...) or line and paragraph separators: a NUL would cut
    /// it in storage, escapes (C1's CSI included) would reach an admin's terminal through the CSV, the JSON and
    /// the CLI, a bidi override or isolate would make the text an admin reads differ from the text stored, an
    /// invisible format character would make two reasons that read the same differ, and U+2028 or U+2029 would
    /// break the line of a log or terminal that ends lines there.
    func reason(required: Bool) throws(APIError) -> String? {
        guard let reason = try optionalString("reason"), !reason.isEmpty else {
            if required { throw .badRequest("reason is required (why this device is banned, for the audit trail)") }
            return nil
        }
        guard reason.unicodeScalars.count <= Self.maxReasonCodePoints else {
            throw .badRequest("reason is limited to \(Self.maxReasonCodePoints) characters (Unicode code points)")
        }
        guard !reason.unicodeScalars.contains(where: Self.isRefusedInReason) else {
            throw .badRequest("reason must not contain control characters (U+0000-U+001F, U+007F-U+009F), format characters "
                              + "(Unicode category Cf: bidirectional controls, U+00AD, U+200B, U+FEFF, ...) or line and "
                              + "paragraph separators (U+2028, U+2029)")
        }
        return reason
    }

    static func isControl(_ scalar: Unicode.Scalar) -> Bool { scalar.value < 0x20 || scalar.value == 0x7F }

    /// C1 controls (U+0080-U+009F: U+009B is a CSI, as ESC [ is).
    static func isC1Control(_ scalar: Unicode.Scalar) -> Bool { (0x80...0x9F).contains(scalar.value) }

    /// Format characters (Unicode category Cf: every bidirectional mark, embedding, override and isolate, the soft
    /// hyphen, zero-width space, U+FEFF, tags) and the line and paragraph separators (Zl U+2028, Zp U+2029):
    /// invisible, or a line break to a reader that ends lines there, so the text an admin reads is not the text
    /// stored. The two joiners (U+200C, U+200D) are Cf but text: emoji sequences and Persian or Indic words need them.
    static func isFormatOrSeparator(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .format, .lineSeparator, .paragraphSeparator: !scalar.properties.isJoinControl
        default: false
        }
    }

    /// What a `reason` may not contain.
    static func isRefusedInReason(_ scalar: Unicode.Scalar) -> Bool { isControl(scalar) || isC1Control(scalar) || isFormatOrSeparator(scalar) }
}
