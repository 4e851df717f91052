/// Unpadded base64url (RFC 4648 §5), the one implementation of the server and the client library: encoded
/// straight into a string's storage, decoded strictly (a string has one spelling).
public enum Base64URL {
    static let alphabet: [UInt8] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// How many characters `count` bytes encode to.
    public static func encodedLength(_ count: Int) -> Int { (count * 8 + 5) / 6 }

    public static func encode(_ bytes: UnsafeRawBufferPointer) -> String {
        String(unsafeUninitializedCapacity: encodedLength(bytes.count)) { out in write(bytes, into: out) }
    }

    /// `bytes` (a `Data`, an array) in base64url without padding.
    public static func encode(_ bytes: some Collection<UInt8>) -> String {
        bytes.withContiguousStorageIfAvailable { encode(UnsafeRawBufferPointer($0)) }
            ?? Array(bytes).withUnsafeBytes { encode($0) }
    }

    /// Writes the encoding of `bytes` at the start of `out` (at least `encodedLength` long); returns its length.
    public static func write(_ bytes: UnsafeRawBufferPointer, into out: UnsafeMutableBufferPointer<UInt8>) -> Int {
        alphabet.withUnsafeBufferPointer { table in
            var o = 0, i = 0
            let n = bytes.count
            while i + 3 <= n {
                let v = UInt32(bytes[i]) << 16 | UInt32(bytes[i + 1]) << 8 | UInt32(bytes[i + 2])
                out[o] = table[Int(v >> 18 & 63)]; out[o + 1] = table[Int(v >> 12 & 63)]
                out[o + 2] = table[Int(v >> 6 & 63)]; out[o + 3] = table[Int(v & 63)]
                o += 4; i += 3
            }
            if n - i == 1 {
                let v = UInt32(bytes[i]) << 16
                out[o] = table[Int(v >> 18 & 63)]; out[o + 1] = table[Int(v >> 12 & 63)]
                o += 2
            } else if n - i == 2 {
                let v = UInt32(bytes[i]) << 16 | UInt32(bytes[i + 1]) << 8
                out[o] = table[Int(v >> 18 & 63)]; out[o + 1] = table[Int(v >> 12 & 63)]; out[o + 2] = table[Int(v >> 6 & 63)]
                o += 3
            }
            return o
        }
    }

    /// The bytes of unpadded base64url (as JWS uses it); nil on any character outside the alphabet, `=`
    /// included, on an impossible length, and on a last character whose unused low bits are not zero
    /// (RFC 4648 §3.5: otherwise several spellings of one token would decode alike).
    public static func decode(_ text: String) -> [UInt8]? {
        let remainder = text.utf8.count % 4
        if remainder == 1 { return nil }
        var bytes = [UInt8]()
        bytes.reserveCapacity(text.utf8.count * 3 / 4)
        var buffer: UInt32 = 0, bits = 0
        var sextet: UInt8 = 0
        for c in text.utf8 {
            switch c {
            case 0x41...0x5A: sextet = c - 0x41
            case 0x61...0x7A: sextet = c - 0x61 + 26
            case 0x30...0x39: sextet = c - 0x30 + 52
            case 0x2D: sextet = 62
            case 0x5F: sextet = 63
            default: return nil
            }
            buffer = buffer << 6 | UInt32(sextet)
            bits += 6
            if bits >= 8 {
                bits -= 8
                bytes.append(UInt8(truncatingIfNeeded: buffer >> UInt32(bits)))
                buffer &= (1 << UInt32(bits)) - 1
            }
        }
        // The last character's unused bits (4 after two characters of a group, 2 after three) are dropped.
        if remainder > 0 {
            guard sextet & (remainder == 2 ? 0x0F : 0x03) == 0 else { return nil }
        }
        return bytes
    }
}
