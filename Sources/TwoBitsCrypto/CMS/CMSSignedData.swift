import COpenSSL
import COpenSSLShims
public import FoundationEssentials

/// One CMS (PKCS#7) signed-data with embedded content, parsed by OpenSSL from BER (indefinite lengths and
/// a content split into chunks are joined by the parser) or DER. Thin: it reads and checks signatures;
/// which certificate to trust is the caller's decision (`CertificateChainVerifier`).
// Not Sendable: `verifySignature` changes the OpenSSL object (CMS_verify caches inside it), so an instance
// belongs to the one verification that parsed it.
public final class CMSSignedData {
    private let cms: OpaquePointer
    /// The embedded content (id-data), its chunks joined.
    public let content: Data
    /// The certificates the signed-data carries, in order.
    public let certificates: [X509Certificate]
    /// Whether the one signer info carries signed attributes.
    public let hasSignedAttributes: Bool

    /// Parses `bytes` (one ContentInfo, nothing after it) and requires signed-data with id-data content,
    /// embedded, and exactly one signer.
    public init(_ bytes: Data) throws(CMSError) {
        guard !bytes.isEmpty, bytes.count <= 1 << 20 else { throw .malformed("empty or larger than 1 MiB") }
        let parsed: OpaquePointer? = bytes.withUnsafeBytes { raw in
            twobits_cms_read(raw.bindMemory(to: UInt8.self).baseAddress, raw.count)
        }
        guard let parsed else { throw .malformed("not one CMS content info: \(drainOpenSSLErrors())") }
        // A class whose init throws before every property is set never runs deinit: free it here then.
        var kept = false
        defer { if !kept { CMS_ContentInfo_free(parsed) } }
        let signers = twobits_cms_signer_count(parsed)
        guard signers == 1 else { throw .malformed(signers < 0 ? "not signed-data" : "not exactly one signer") }
        guard OBJ_obj2nid(CMS_get0_eContentType(parsed)) == NID_pkcs7_data else { throw .malformed("the content type is not id-data") }
        guard let slot = CMS_get0_content(parsed), let octets = slot.pointee else { throw .malformed("no embedded content") }
        let length = Int(ASN1_STRING_length(octets))
        guard length > 0, let start = ASN1_STRING_get0_data(octets) else { throw .malformed("empty content") }
        let content = Data(bytes: start, count: length)
        var certificates: [X509Certificate] = []
        if let stack = twobits_cms_certificates(parsed) {
            defer { twobits_x509_stack_free_all(stack) }
            for index in 0..<twobits_x509_stack_count(stack) {
                guard let cert = twobits_x509_stack_value(stack, index) else { continue }
                do { certificates.append(try X509Certificate(sharing: cert)) } catch { throw .malformed("certificate \(index): \(error)") }
            }
        }
        cms = parsed
        self.content = content
        self.certificates = certificates
        hasSignedAttributes = CMS_signed_get_attr_count(twobits_cms_signer(parsed, 0)) > 0
        kept = true
    }

    deinit { CMS_ContentInfo_free(cms) }

    /// The certificate among `certificates` that the signer info names (issuer and serial, or key identifier).
    public var signerCertificate: X509Certificate? {
        guard let signer = twobits_cms_signer(cms, 0) else { return nil }
        return certificates.first { CMS_SignerInfo_cert_cmp(signer, $0.cert) == 0 }
    }

    /// Checks the one signature over the content with the signer's certificate key, as RFC 5652 defines it
    /// (over the signed attributes when there are any, whose message digest must then be the content's).
    /// The certificate itself is not judged here.
    public func verifySignature() throws(CMSError) {
        guard let out = BIO_new(BIO_s_null()) else { throw .malformed("BIO_new failed") }
        defer { BIO_free(out) }
        // NO_SIGNER_CERT_VERIFY: the chain is the caller's (a pinned root, a chosen time); BINARY: no MIME
        // canonicalisation of the content.
        let result = CMS_verify(cms, nil, nil, nil, out, UInt32(CMS_NO_SIGNER_CERT_VERIFY | CMS_BINARY))
        guard result == 1 else { throw .badSignature(drainOpenSSLErrors()) }
    }

    /// The signer's messageDigest signed attribute, or nil when it has none.
    public var messageDigestAttribute: Data? {
        guard let signer = twobits_cms_signer(cms, 0), let digest = twobits_cms_signer_message_digest(signer) else { return nil }
        let length = Int(ASN1_STRING_length(digest))
        guard length >= 0, let start = ASN1_STRING_get0_data(digest) else { return nil }
        return Data(bytes: start, count: length)
    }

    /// The signer info's signature value (DER ECDSA for Apple's receipts).
    public var signature: Data {
        guard let signer = twobits_cms_signer(cms, 0), let value = CMS_SignerInfo_get0_signature(signer) else { return Data() }
        let length = Int(ASN1_STRING_length(value))
        guard length > 0, let start = ASN1_STRING_get0_data(value) else { return Data() }
        return Data(bytes: start, count: length)
    }

    /// The same signed-data re-encoded as DER (definite lengths, the content as one OCTET STRING).
    public func derEncoding() throws(CMSError) -> Data {
        var out: UnsafeMutablePointer<UInt8>?
        let length = twobits_cms_write_der(cms, &out)
        guard length > 0, let out else { throw .malformed("cannot encode: \(drainOpenSSLErrors())") }
        defer { twobits_openssl_free(out) }
        return Data(bytes: out, count: Int(length))
    }
}
