import COpenSSL
import COpenSSLShims
public import FoundationEssentials

/// One X.509 certificate held by OpenSSL. Immutable after parsing, so it is safe to share across threads.
// Sendable (its OpenSSL pointer held as an OpenSSLHandle): the OpenSSL certificate is never changed after parsing, and OpenSSL allows concurrent reads of it.
public final class X509Certificate: Sendable {
    private let certHandle: OpenSSLHandle
    var cert: OpaquePointer { certHandle.pointer }
    /// Held as an array, not Data: Data's enum layout tags its storage pointer, so LeakSanitizer would
    /// report the bytes of every certificate kept in a static (the compiled-in roots) as leaked.
    private let derBytes: [UInt8]

    /// The exact DER bytes it was parsed from.
    public var der: Data { Data(derBytes) }

    /// Whether `other` was parsed from exactly the same DER bytes.
    public func hasSameDER(as other: X509Certificate) -> Bool { derBytes == other.derBytes }

    /// Whether these are exactly its DER bytes (without copying them).
    public func hasDER(_ other: Data) -> Bool {
        other.count == derBytes.count && other.withUnsafeBytes { o in derBytes.withUnsafeBytes { memcmp(o.baseAddress!, $0.baseAddress!, $0.count) == 0 } }
    }

    /// Parses exactly one DER certificate; trailing bytes are refused.
    public init(der: Data) throws(X509Error) {
        guard !der.isEmpty, der.count <= 1 << 20 else { throw .malformed("empty or larger than 1 MiB") }
        let parsed: OpaquePointer? = der.withUnsafeBytes { raw in
            guard let base = raw.bindMemory(to: UInt8.self).baseAddress else { return nil }
            var cursor: UnsafePointer<UInt8>? = base
            guard let cert = d2i_X509(nil, &cursor, raw.count) else { return nil }
            // d2i_X509 stops at the end of the first certificate: anything after it is not ours to ignore.
            guard cursor == base + raw.count else { X509_free(cert); return nil }
            return cert
        }
        guard let parsed else {
            let detail = drainOpenSSLErrors()
            throw .malformed(detail == "unknown OpenSSL error" ? "trailing bytes after the certificate" : detail)
        }
        certHandle = OpenSSLHandle(parsed)
        derBytes = [UInt8](der)
    }

    /// Takes a reference of its own to a certificate OpenSSL already parsed (a CMS's), keeping its DER.
    init(sharing parsed: OpaquePointer) throws(X509Error) {
        var out: UnsafeMutablePointer<UInt8>?
        let length = i2d_X509(parsed, &out)
        guard length > 0, let out else { throw .malformed(drainOpenSSLErrors()) }
        defer { twobits_openssl_free(out) }
        guard X509_up_ref(parsed) == 1 else { throw .malformed("X509_up_ref failed") }
        certHandle = OpenSSLHandle(parsed)
        derBytes = [UInt8](UnsafeBufferPointer(start: out, count: Int(length)))
    }

    deinit { X509_free(cert) }

    /// Every "CERTIFICATE" block of a PEM text, in order.
    public static func certificates(pem: String) throws(X509Error) -> [X509Certificate] {
        let bytes = Array(pem.utf8)
        // A memory BIO reads the bytes in place: it is used only while they are pinned (a pointer kept past
        // withUnsafeBytes read freed memory once the text was large: a system CA bundle, apple.ca_file).
        let result = bytes.withUnsafeBytes { raw -> Result<[X509Certificate], X509Error> in
            guard let bio = BIO_new_mem_buf(raw.baseAddress, Int32(raw.count)) else { return .failure(.malformed("BIO_new_mem_buf failed")) }
            defer { BIO_free(bio) }
            do throws(X509Error) { return .success(try certificates(reading: bio)) } catch { return .failure(error) }
        }
        return try result.get()
    }

    /// Every certificate PEM_read_bio_X509 finds in `bio`.
    private static func certificates(reading bio: OpaquePointer) throws(X509Error) -> [X509Certificate] {
        var result: [X509Certificate] = []
        while let cert = PEM_read_bio_X509(bio, nil, nil, nil) {
            defer { X509_free(cert) }
            let length = i2d_X509(cert, nil)
            guard length > 0 else { throw .malformed(drainOpenSSLErrors()) }
            var der = Data(count: Int(length))
            let written = der.withUnsafeMutableBytes { raw -> Int32 in
                var out = raw.bindMemory(to: UInt8.self).baseAddress
                return i2d_X509(cert, &out)
            }
            guard written == length else { throw .malformed(drainOpenSSLErrors()) }
            result.append(try X509Certificate(der: der))
        }
        // The loop ends on "no more PEM blocks", which OpenSSL reports as an error: clear it.
        ERR_clear_error()
        guard !result.isEmpty else { throw .malformed("no PEM CERTIFICATE block") }
        return result
    }

    /// The one certificate of a PEM text (the first when there are several).
    public convenience init(pem: String) throws(X509Error) {
        let first = try Self.certificates(pem: pem)[0]
        try self.init(der: first.der)
    }

    /// The subject as one line ("/CN=.../O=...").
    public var subject: String { Self.oneLine(X509_get_subject_name(cert)) }

    /// The issuer as one line.
    public var issuer: String { Self.oneLine(X509_get_issuer_name(cert)) }

    private static func oneLine(_ name: OpaquePointer?) -> String {
        guard let name else { return "" }
        var buffer = [CChar](repeating: 0, count: 512)
        guard X509_NAME_oneline(name, &buffer, Int32(buffer.count)) != nil else { return "" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The DER value (the contents of extnValue) of the extension with this dotted OID, or nil when absent.
    public func extensionValue(oid: String) -> Data? {
        guard let object = OBJ_txt2obj(oid, 1) else { ERR_clear_error(); return nil }
        defer { ASN1_OBJECT_free(object) }
        let index = X509_get_ext_by_OBJ(cert, object, -1)
        guard index >= 0, let ext = X509_get_ext(cert, index), let value = X509_EXTENSION_get_data(ext) else { return nil }
        let length = Int(ASN1_STRING_length(value))
        guard length >= 0, let bytes = ASN1_STRING_get0_data(value) else { return nil }
        return Data(bytes: bytes, count: length)
    }

    /// The subject public key as an uncompressed P-256 point (0x04 ‖ X ‖ Y, 65 bytes).
    public func p256PublicPoint() throws(X509Error) -> Data {
        // get0: the key belongs to the certificate, not to us.
        guard let key = X509_get0_pubkey(cert) else { throw .notP256(drainOpenSSLErrors()) }
        do { try P256PrivateKey.checkP256(key) } catch { throw .notP256(error.description) }
        var buffer = [UInt8](repeating: 0, count: 65)
        let length = twobits_ec_public_point(key, &buffer, buffer.count)
        // The point parameter may be held compressed; ask for the uncompressed form if so.
        guard length == 65, buffer[0] == 0x04 else { throw .notP256("the point is not 65 uncompressed bytes") }
        return Data(buffer)
    }
}
