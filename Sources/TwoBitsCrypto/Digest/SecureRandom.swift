import COpenSSL
public import FoundationEssentials
import WireFormats
import WireVocabulary

/// Cryptographically secure random bytes from OpenSSL's DRBG (small requests through a per-thread
/// `RandomPool` of its output).
public enum SecureRandom {
    public static func bytes(_ count: Int) -> Data {
        var out = Data(count: count)
        out.withUnsafeMutableBytes { RandomPool.fill($0) }
        return out
    }

    /// `count` random bytes as unpadded base64url (token ids), in one allocation.
    public static func base64URL(bytes count: Int) -> String {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: count) { raw in
            RandomPool.fill(UnsafeMutableRawBufferPointer(raw))
            return Base64URL.encode(UnsafeRawBufferPointer(raw))
        }
    }

    /// A random RFC 4122 version-4 UUID string (lowercase). One allocation: it is made for every Apple call.
    public static func uuid() -> String {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 16) { raw in
            RandomPool.fill(UnsafeMutableRawBufferPointer(raw))
            raw[6] = (raw[6] & 0x0F) | 0x40
            raw[8] = (raw[8] & 0x3F) | 0x80
            return uuidString(raw)
        }
    }

    /// A time-ordered RFC 9562 version-7 UUID string (lowercase): the first 48 bits are `milliseconds` since
    /// the Unix epoch, the rest random. Keys made in order land side by side in a B-tree index, so rows
    /// written together share index pages (and SQLite's log frames) instead of each touching a random page.
    public static func uuidV7(milliseconds: UInt64) -> String {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 16) { raw in
            RandomPool.fill(UnsafeMutableRawBufferPointer(raw))
            for i in 0..<6 { raw[i] = UInt8(truncatingIfNeeded: milliseconds >> (8 * UInt64(5 - i))) }
            raw[6] = (raw[6] & 0x0F) | 0x70
            raw[8] = (raw[8] & 0x3F) | 0x80
            return uuidString(raw)
        }
    }

    private static func uuidString(_ raw: UnsafeMutableBufferPointer<UInt8>) -> String {
        String(unsafeUninitializedCapacity: 36) { out in
            var o = 0
            for i in 0..<16 {
                if i == 4 || i == 6 || i == 8 || i == 10 { out[o] = UInt8(ascii: "-"); o += 1 }
                out[o] = HexDigits.lower[Int(raw[i] >> 4)]
                out[o + 1] = HexDigits.lower[Int(raw[i] & 0x0F)]
                o += 2
            }
            return o
        }
    }
}
