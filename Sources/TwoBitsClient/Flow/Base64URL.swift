#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// base64url (RFC 4648 §5, unpadded), the alphabet of TwoBits' challenges.
enum Base64URL {
    /// The bytes of `text`, or nil when it is not base64url.
    static func decode(_ text: String) -> Data? {
        var standard = String(text.map { $0 == "-" ? "+" : $0 == "_" ? "/" : $0 })
        while standard.count % 4 != 0 { standard += "=" }
        return Data(base64Encoded: standard)
    }

    /// `data` in base64url without padding.
    static func encode(_ data: Data) -> String {
        var text = String(data.base64EncodedString().map { $0 == "+" ? "-" : $0 == "/" ? "_" : $0 })
        while text.hasSuffix("=") { text.removeLast() }
        return text
    }
}
