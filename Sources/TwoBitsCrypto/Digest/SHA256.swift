import COpenSSL
import Foundation

/// SHA-256 through OpenSSL's EVP interface.
public enum SHA256 {
    /// The 32-byte digest of `data`.
    public static func hash<D: DataProtocol>(_ data: D) -> Data {
        var md = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        let digest = { (buffer: UnsafeRawBufferPointer) in
            EVP_Digest(buffer.baseAddress, buffer.count, &md, &length, EVP_sha256(), nil)
        }
        // Contiguous input (Data, arrays, String.UTF8View) is hashed in place; anything else is copied once.
        let ok = data.withContiguousStorageIfAvailable { digest(UnsafeRawBufferPointer($0)) }
            ?? Array(data).withUnsafeBytes(digest)
        precondition(ok == 1 && length == 32, "EVP_Digest(SHA-256) failed")
        return Data(md)
    }

    /// Lowercase hex of the digest of a UTF-8 string.
    public static func hex(_ string: String) -> String {
        hash(Data(string.utf8)).hexString
    }
}
