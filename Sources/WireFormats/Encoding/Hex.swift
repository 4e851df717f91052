public import FoundationEssentials

/// The sixteen lowercase hex digits, as bytes.
package enum HexDigits {
    package static let lower: [UInt8] = Array("0123456789abcdef".utf8)

    /// Lowercase hex of `bytes`, written straight into the string's storage.
    package static func string(_ bytes: UnsafeRawBufferPointer) -> String {
        String(unsafeUninitializedCapacity: bytes.count * 2) { out in
            for (i, byte) in bytes.enumerated() {
                out[2 * i] = lower[Int(byte >> 4)]
                out[2 * i + 1] = lower[Int(byte & 0x0F)]
            }
            return bytes.count * 2
        }
    }
}

extension Data {
    /// Lowercase hexadecimal.
    public var hexString: String { withUnsafeBytes { HexDigits.string($0) } }

    /// Parses hexadecimal (either case); nil when the length is odd or a character is not a hex digit.
    public init?(hexString: String) {
        let chars = Array(hexString.utf8)
        guard chars.count % 2 == 0 else { return nil }
        func value(_ c: UInt8) -> UInt8? {
            switch c {
            case 0x30...0x39: return c - 0x30
            case 0x61...0x66: return c - 0x61 + 10
            case 0x41...0x46: return c - 0x41 + 10
            default: return nil
            }
        }
        var bytes = [UInt8]()
        bytes.reserveCapacity(chars.count / 2)
        var i = 0
        while i < chars.count {
            guard let hi = value(chars[i]), let lo = value(chars[i + 1]) else { return nil }
            bytes.append(hi << 4 | lo)
            i += 2
        }
        self.init(bytes)
    }
}
