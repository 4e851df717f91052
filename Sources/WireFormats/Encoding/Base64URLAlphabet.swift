/// Unpadded base64url (RFC 4648 §5), written straight into the string's storage.
public enum Base64URL {
    static let alphabet: [UInt8] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// How many characters `count` bytes encode to.
    public static func encodedLength(_ count: Int) -> Int { (count * 8 + 5) / 6 }

    public static func encode(_ bytes: UnsafeRawBufferPointer) -> String {
        String(unsafeUninitializedCapacity: encodedLength(bytes.count)) { out in write(bytes, into: out) }
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
}
