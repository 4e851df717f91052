import COpenSSL
public import FoundationEssentials
import WireFormats

/// SHA-256 through OpenSSL's EVP interface.
public enum SHA256Digest {
    /// Fetched once. With `EVP_sha256()` OpenSSL 3 looks the algorithm up again on every digest (an
    /// implicit fetch), which costs more than the digest of an API key (measured: Benchmarks/HISTORY.md, 2026-11-26, 00:00-01:10).
    nonisolated(unsafe) private static let algorithm: OpaquePointer = {
        guard let md = EVP_MD_fetch(nil, "SHA256", nil) else { fatalError("EVP_MD_fetch(SHA256) failed") }
        return md
    }()

    /// The 32-byte digest of `data`.
    public static func hash<D: DataProtocol>(_ data: D) -> Data {
        var md = Data(count: 32)
        var length: UInt32 = 0
        let digest = { (buffer: UnsafeRawBufferPointer) in
            md.withUnsafeMutableBytes { EVP_Digest(buffer.baseAddress, buffer.count, $0.baseAddress, &length, algorithm, nil) }
        }
        // Contiguous input (Data, arrays, String.UTF8View) is hashed in place; anything else is copied once.
        let ok = data.withContiguousStorageIfAvailable { digest(UnsafeRawBufferPointer($0)) }
            ?? Array(data).withUnsafeBytes(digest)
        precondition(ok == 1 && length == 32, "EVP_Digest(SHA-256) failed")
        return md
    }

    /// Lowercase hex of the digest of a UTF-8 string (hashed in place, no copy of the string).
    public static func hex(_ string: String) -> String {
        var string = string
        return string.withUTF8 { utf8 in
            withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 32) { md in
                var length: UInt32 = 0
                precondition(EVP_Digest(utf8.baseAddress, utf8.count, md.baseAddress, &length, algorithm, nil) == 1 && length == 32,
                             "EVP_Digest(SHA-256) failed")
                return HexDigits.string(UnsafeRawBufferPointer(md))
            }
        }
    }
}
