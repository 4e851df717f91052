import FoundationEssentials
import TwoBitsCrypto

/// The base64 token an app got from `DCDevice.generateToken`. Opaque, fresh on every call, and a
/// secret: it never appears in a log or description, only its digest prefix.
public struct DeviceToken: Sendable, Hashable, CustomStringConvertible {
    public let base64: String
    /// SHA-256 of the token text, lowercase hex: what is stored to recognise a token again. Computed
    /// once: the reuse check, the audit trail and the logs all need it.
    public let digest: String

    /// The longest token accepted, in characters (docs/openapi.yaml `DeviceToken`); Apple's are a few KB.
    public static let maxLength = 16 * 1024

    /// Accepts standard base64 without line breaks (length a multiple of 4, `=` only as final
    /// padding), up to 16 KiB; nil otherwise. Checked byte by byte, without decoding.
    public init?(_ base64: String) {
        var text = base64
        let valid = text.withUTF8 { Self.isBase64($0) }
        guard valid else { return nil }
        self.base64 = text
        self.digest = SHA256Digest.hex(text)
    }

    /// Which bytes are in the base64 alphabet (A-Z, a-z, 0-9, +, /): one load per byte.
    private static let alphabet: [Bool] = (0..<256).map { c in
        (0x41...0x5A).contains(c) || (0x61...0x7A).contains(c) || (0x30...0x39).contains(c) || c == 0x2B || c == 0x2F
    }

    static func isBase64(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        let n = bytes.count
        guard n > 0, n <= maxLength, n % 4 == 0 else { return false }
        // At most two '=' and only at the end.
        var end = n
        if bytes[n - 1] == 0x3D { end -= 1 }
        if end < n, bytes[n - 2] == 0x3D { end -= 1 }
        return alphabet.withUnsafeBufferPointer { table in
            var valid = true
            for i in 0..<end { valid = valid && table[Int(bytes[i])] }
            return valid
        }
    }

    /// The first 12 hex digits of the digest: enough to correlate log lines, useless to an attacker.
    public var shortDigest: String { String(digest.prefix(12)) }

    public var description: String { "DeviceToken(sha256:\(shortDigest)…)" }
}
