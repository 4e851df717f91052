import COpenSSL
import COpenSSLShims
public import FoundationEssentials

/// A P-256 public key: verifies ES256 signatures and describes itself as a JWK.
// Sendable (its OpenSSL pointer held as an OpenSSLHandle): the OpenSSL key is never changed after init, and OpenSSL allows concurrent use of a key read-only.
public final class P256PublicKey: Sendable {
    private let pkeyHandle: OpenSSLHandle
    var pkey: OpaquePointer { pkeyHandle.pointer }

    init(taking pkey: OpaquePointer) { self.pkeyHandle = OpenSSLHandle(pkey) }
    deinit { EVP_PKEY_free(pkey) }

    /// Parses a PEM "PUBLIC KEY" (SubjectPublicKeyInfo), or derives it from a PEM private key.
    public convenience init(pem: String) throws(KeyError) {
        if pem.contains("PRIVATE KEY") {
            let priv = try P256PrivateKey(pem: pem)
            guard let pub = twobits_public_only(priv.pkey) else { throw .malformed(drainOpenSSLErrors()) }
            self.init(taking: pub)
            return
        }
        guard pem.contains("-----BEGIN PUBLIC KEY-----") else { throw .notPEM }
        let bytes = Array(pem.utf8)
        let key: OpaquePointer? = bytes.withUnsafeBytes { buf in
            guard let bio = BIO_new_mem_buf(buf.baseAddress, Int32(buf.count)) else { return nil }
            defer { BIO_free(bio) }
            return twobits_read_public_key(bio)
        }
        guard let key else { throw .malformed(drainOpenSSLErrors()) }
        do { try P256PrivateKey.checkP256(key) } catch { EVP_PKEY_free(key); throw error }
        self.init(taking: key)
    }

    /// The uncompressed point: 32-byte X and 32-byte Y.
    public var coordinates: (x: Data, y: Data) {
        var buf = [UInt8](repeating: 0, count: 65)
        let n = twobits_ec_public_point(pkey, &buf, buf.count)
        precondition(n == 65 && buf[0] == 0x04, "unexpected EC point encoding")
        return (Data(buf[1..<33]), Data(buf[33..<65]))
    }

    /// PEM "PUBLIC KEY".
    public var pem: String {
        guard let bio = BIO_new(BIO_s_mem()) else { fatalError("BIO_new failed") }
        defer { BIO_free(bio) }
        precondition(PEM_write_bio_PUBKEY(bio, pkey) == 1)
        var ptr: UnsafeMutablePointer<CChar>?
        let len = twobits_bio_mem_data(bio, &ptr)
        return String(decoding: UnsafeRawBufferPointer(start: ptr, count: len), as: UTF8.self)
    }

    /// Verifies a raw 64-byte r||s ES256 signature over `message`.
    public func verifyES256(signature: Data, message: Data) -> Bool {
        guard signature.count == 64 else { return false }
        var der = [UInt8](repeating: 0, count: 80)
        let derLength = signature.withUnsafeBytes { raw in
            twobits_ecdsa_raw_to_der(raw.bindMemory(to: UInt8.self).baseAddress, &der, Int32(der.count))
        }
        guard derLength > 0, let ctx = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(ctx) }
        guard EVP_DigestVerifyInit(ctx, nil, EVP_sha256(), nil, pkey) == 1 else { return false }
        let ok = message.withUnsafeBytes { m in
            EVP_DigestVerify(ctx, der, Int(derLength), m.bindMemory(to: UInt8.self).baseAddress, m.count)
        }
        if ok != 1 { ERR_clear_error() }
        return ok == 1
    }
}
