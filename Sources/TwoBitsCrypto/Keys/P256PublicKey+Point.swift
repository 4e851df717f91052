import COpenSSL
public import Foundation

extension P256PublicKey {
    /// The SubjectPublicKeyInfo DER header of an uncompressed P-256 point (id-ecPublicKey, prime256v1).
    private static let spkiPrefix: [UInt8] = [
        0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x02, 0x01, 0x06, 0x08, 0x2A,
        0x86, 0x48, 0xCE, 0x3D, 0x03, 0x01, 0x07, 0x03, 0x42, 0x00,
    ]

    /// A key from its uncompressed point (0x04 ‖ X ‖ Y, 65 bytes); a point off the curve is refused.
    public convenience init(uncompressedPoint point: Data) throws(KeyError) {
        guard point.count == 65, point.first == 0x04 else { throw .malformed("not a 65-byte uncompressed P-256 point") }
        let spki = Self.spkiPrefix + Array(point)
        let key: OpaquePointer? = spki.withUnsafeBufferPointer { buffer in
            var cursor = buffer.baseAddress
            return d2i_PUBKEY(nil, &cursor, buffer.count)
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
