/// Why a certificate could not be parsed, read or trusted.
public enum X509Error: Error, Equatable, CustomStringConvertible, Sendable {
    /// The bytes are not one well-formed certificate (DER) or the text holds no PEM certificate.
    case malformed(String)
    /// The certificate's public key is not an uncompressed-capable P-256 key.
    case notP256(String)
    /// The chain does not verify; `reason` is OpenSSL's text ("certificate has expired"), `code` its X509_V_ERR number.
    case untrusted(code: Int, reason: String)

    public var description: String {
        switch self {
        case .malformed(let detail): return "malformed certificate: \(detail)"
        case .notP256(let detail): return "the certificate's key is not P-256: \(detail)"
        case .untrusted(_, let reason): return reason
        }
    }
}
