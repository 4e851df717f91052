import COpenSSL
import COpenSSLShims
public import FoundationEssentials

/// Produces ES256 (ECDSA P-256 + SHA-256) signatures in the JWS form: raw 64-byte r||s.
///
/// A digest context initialised once with the key is copied for each signature, which skips
/// the per-call key setup (measured: Benchmarks/README.md, "ES256 micro-benchmark").
// Sendable (its OpenSSL pointer held as an OpenSSLHandle): `template` is never used in place, only copied (read) into a fresh context for each signature.
public final class ES256Signer: Sendable {
    public let key: P256PrivateKey
    private let templateHandle: OpenSSLHandle
    private var template: OpaquePointer { templateHandle.pointer }

    public init(key: P256PrivateKey) {
        self.key = key
        guard let ctx = EVP_MD_CTX_new(), EVP_DigestSignInit(ctx, nil, EVP_sha256(), nil, key.pkey) == 1 else {
            fatalError("EVP_DigestSignInit failed: \(drainOpenSSLErrors())")
        }
        templateHandle = OpenSSLHandle(ctx)
    }

    deinit { EVP_MD_CTX_free(template) }

    /// Signs `message`, returning r||s with each half left-padded to 32 bytes.
    public func sign(_ message: Data) -> Data {
        message.withUnsafeBytes { sign($0) }
    }

    /// Signs bytes in place (a JWS signing input is signed where it was built, not copied first).
    public func sign(_ message: UnsafeRawBufferPointer) -> Data {
        guard let ctx = EVP_MD_CTX_new() else { fatalError("EVP_MD_CTX_new failed") }
        defer { EVP_MD_CTX_free(ctx) }
        precondition(EVP_MD_CTX_copy_ex(ctx, template) == 1, "EVP_MD_CTX_copy_ex failed")
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 80) { der in
            var derLength = der.count
            let ok = EVP_DigestSign(ctx, der.baseAddress, &derLength, message.bindMemory(to: UInt8.self).baseAddress, message.count)
            precondition(ok == 1, "EVP_DigestSign failed: \(drainOpenSSLErrors())")
            var raw = Data(count: 64)
            let converted = raw.withUnsafeMutableBytes {
                twobits_ecdsa_der_to_raw(der.baseAddress, derLength, $0.baseAddress!.assumingMemoryBound(to: UInt8.self))
            }
            precondition(converted == 1, "DER to raw signature conversion failed")
            return raw
        }
    }
}
