import COpenSSL
import COpenSSLShims
import FoundationEssentials

/// A P-256 private key held by OpenSSL. Immutable after creation, so it is safe to share across threads.
// Sendable (its OpenSSL pointer held as an OpenSSLHandle): the OpenSSL key is never changed after init, and OpenSSL allows concurrent use of a key read-only.
public final class P256PrivateKey: Sendable {
    private let pkeyHandle: OpenSSLHandle
    var pkey: OpaquePointer { pkeyHandle.pointer }

    init(taking pkey: OpaquePointer) { self.pkeyHandle = OpenSSLHandle(pkey) }
    deinit { EVP_PKEY_free(pkey) }

    /// A fresh random key.
    public static func generate() -> P256PrivateKey {
        guard let k = twobits_ec_p256_generate() else { fatalError("EC key generation failed: \(drainOpenSSLErrors())") }
        return P256PrivateKey(taking: k)
    }

    /// Parses an unencrypted PEM private key (PKCS#8 "PRIVATE KEY" or SEC1 "EC PRIVATE KEY") on P-256.
    public convenience init(pem: String) throws(KeyError) {
        if pem.contains("ENCRYPTED PRIVATE KEY") || pem.contains("Proc-Type: 4,ENCRYPTED") { throw .encrypted }
        guard pem.contains("-----BEGIN ") else { throw .notPEM }
        let bytes = Array(pem.utf8)
        let key: OpaquePointer? = bytes.withUnsafeBytes { buf in
            guard let bio = BIO_new_mem_buf(buf.baseAddress, Int32(buf.count)) else { return nil }
            defer { BIO_free(bio) }
            return twobits_read_private_key(bio)
        }
        guard let key else { throw .malformed(drainOpenSSLErrors()) }
        do { try Self.checkP256(key) } catch { EVP_PKEY_free(key); throw error }
        self.init(taking: key)
    }

    /// Loads a `.p8`/PEM key file with errors that name the problem.
    public convenience init(contentsOfFile path: String) throws(KeyError) {
        let bytes: [UInt8]
        do { bytes = try FileBytes.read(path) } catch {
            let reason = error.isNotRegularFile ? error.reason : error.errno == ENOENT ? "no such file" : "permission denied or not a regular file"
            throw .unreadable(path: path, reason: reason)
        }
        guard let text = String(validating: bytes, as: UTF8.self) else { throw .notPEM }
        try self.init(pem: text)
    }

    static func checkP256(_ key: OpaquePointer) throws(KeyError) {
        guard twobits_pkey_is_ec(key) == 1 else {
            let name = EVP_PKEY_get0_type_name(key).map { String(cString: $0) } ?? "not EC"
            throw .notEC(name)
        }
        var name = [CChar](repeating: 0, count: 64)
        _ = twobits_ec_group_name(key, &name, name.count)
        let curve = String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        guard curve == "prime256v1" || curve == "P-256" else { throw .wrongCurve(curve.isEmpty ? "unknown" : curve) }
    }

    /// Unencrypted PKCS#8 PEM ("-----BEGIN PRIVATE KEY-----").
    public var pkcs8PEM: String {
        guard let bio = BIO_new(BIO_s_mem()) else { fatalError("BIO_new failed") }
        defer { BIO_free(bio) }
        precondition(twobits_write_private_key(bio, pkey) == 1, "PEM_write_bio_PKCS8PrivateKey failed")
        var ptr: UnsafeMutablePointer<CChar>?
        let len = twobits_bio_mem_data(bio, &ptr)
        return String(decoding: UnsafeRawBufferPointer(start: ptr, count: len), as: UTF8.self)
    }

    /// The matching public key.
    public var publicKey: P256PublicKey {
        guard let pub = twobits_public_only(pkey) else { fatalError("public key export failed") }
        return P256PublicKey(taking: pub)
    }
}
