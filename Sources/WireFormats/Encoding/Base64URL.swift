public import FoundationEssentials

extension Data {
    /// Base64url without padding (RFC 4648 §5), as JWS uses it.
    public func base64URLEncodedString() -> String {
        withUnsafeBytes { Base64URL.encode($0) }
    }

    /// Decodes unpadded base64url (as JWS uses it); nil on any character outside the alphabet, `=` included,
    /// on an impossible length, and on a last character whose unused low bits are not zero (RFC 4648 §3.5:
    /// otherwise several spellings of one token would decode alike).
    public init?(base64URLEncoded string: String) {
        var bytes = [UInt8]()
        bytes.reserveCapacity(string.utf8.count + 3)
        for c in string.utf8 {
            switch c {
            case 0x41...0x5A, 0x61...0x7A, 0x30...0x39: bytes.append(c)
            case 0x2D: bytes.append(0x2B)
            case 0x5F: bytes.append(0x2F)
            default: return nil
            }
        }
        let remainder = bytes.count % 4
        if remainder == 1 { return nil }
        if remainder > 0, let last = bytes.last {
            let sextet: UInt8
            switch last {
            case 0x41...0x5A: sextet = last - 0x41
            case 0x61...0x7A: sextet = last - 0x61 + 26
            case 0x30...0x39: sextet = last - 0x30 + 52
            case 0x2B: sextet = 62
            default: sextet = 63
            }
            guard sextet & (remainder == 2 ? 0x0F : 0x03) == 0 else { return nil }
        }
        if remainder > 0 { bytes.append(contentsOf: repeatElement(0x3D, count: 4 - remainder)) }
        self.init(base64Encoded: Data(bytes))
    }
}
