import Foundation
import TwoBitsCrypto

/// The base64 token an app got from `DCDevice.generateToken`. Opaque, fresh on every call, and a
/// secret: it never appears in a log or description, only its digest prefix.
public struct DeviceToken: Sendable, Hashable, CustomStringConvertible {
    public let base64: String

    /// Accepts standard base64 without line breaks, up to 16 KiB; nil otherwise.
    public init?(_ base64: String) {
        guard !base64.isEmpty, base64.utf8.count <= 16 * 1024,
              base64.utf8.allSatisfy({ c in
                  (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) || (c >= 0x30 && c <= 0x39) || c == 0x2B || c == 0x2F || c == 0x3D
              }),
              Data(base64Encoded: base64) != nil
        else { return nil }
        self.base64 = base64
    }

    /// SHA-256 of the token text, lowercase hex: what is stored to recognise a token again.
    public var digest: String { SHA256.hex(base64) }

    /// The first 12 hex digits of the digest: enough to correlate log lines, useless to an attacker.
    public var shortDigest: String { String(digest.prefix(12)) }

    public var description: String { "DeviceToken(sha256:\(shortDigest)…)" }
}
