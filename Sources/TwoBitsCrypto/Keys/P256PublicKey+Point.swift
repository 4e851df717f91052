import COpenSSL
import COpenSSLShims
public import FoundationEssentials

extension P256PublicKey {
    /// A key from its uncompressed point (0x04 ‖ X ‖ Y, 65 bytes); a point off the curve is refused.
    public convenience init(uncompressedPoint point: Data) throws(KeyError) {
        guard point.count == 65, point.first == 0x04 else { throw .malformed("not a 65-byte uncompressed P-256 point") }
        let key: OpaquePointer? = point.withUnsafeBytes { raw in
            twobits_p256_public_from_point(raw.bindMemory(to: UInt8.self).baseAddress, raw.count)
        }
        guard let key else { throw .malformed("not a point on P-256: \(drainOpenSSLErrors())") }
        self.init(taking: key)
    }

    /// The uncompressed point 0x04 ‖ X ‖ Y.
    public var uncompressedPoint: Data {
        let (x, y) = coordinates
        return Data([0x04]) + x + y
    }

    /// Verifies a DER-encoded ECDSA signature over `message` (SHA-256 is applied to `message` inside).
    public func verifyDER(signature: Data, message: Data) -> Bool {
        guard !signature.isEmpty, signature.count <= 80, let context = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestVerifyInit(context, nil, EVP_sha256(), nil, pkey) == 1 else { ERR_clear_error(); return false }
        let ok = signature.withUnsafeBytes { s in
            message.withUnsafeBytes { m in
                EVP_DigestVerify(context, s.bindMemory(to: UInt8.self).baseAddress, s.count,
                                 m.bindMemory(to: UInt8.self).baseAddress, m.count)
            }
        }
        if ok != 1 { ERR_clear_error() }
        return ok == 1
    }
}
