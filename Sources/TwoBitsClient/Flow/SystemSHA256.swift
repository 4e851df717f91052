#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(CryptoKit) && (os(iOS) || os(macOS))
internal import CryptoKit
#elseif os(Linux)
internal import COpenSSL
#endif

/// SHA-256 from the operating system, never written here: CryptoKit on Apple platforms, libcrypto (the
/// package's `COpenSSL` module, a Linux-only dependency) where the tests run. The client data hashes App Attest
/// signs and the cache's session keys go through it.
enum SystemSHA256 {
    static func hash(_ data: Data) -> Data {
        #if canImport(CryptoKit) && (os(iOS) || os(macOS))
        return Data(SHA256.hash(data: data))
        #elseif os(Linux)
        var digest = [UInt8](repeating: 0, count: 32)
        let done = data.withUnsafeBytes { raw in
            EVP_Digest(raw.baseAddress, raw.count, &digest, nil, EVP_sha256(), nil)
        }
        // EVP_Digest fails only when libcrypto cannot allocate a context: nothing to hash with is a broken process.
        precondition(done == 1, "libcrypto's SHA-256 failed")
        return Data(digest)
        #else
        #error("TwoBitsClient needs CryptoKit (iOS, macOS) or libcrypto (Linux) for SHA-256")
        #endif
    }
}
