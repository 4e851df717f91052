/// Why a CMS signed-data could not be read or its signature did not verify.
public enum CMSError: Error, Equatable, CustomStringConvertible, Sendable {
    /// The bytes are not one signed-data of the expected shape.
    case malformed(String)
    /// The signature does not verify with the signer's certificate key (OpenSSL's text).
    case badSignature(String)

    public var description: String {
        switch self {
        case .malformed(let detail): return "malformed CMS signed-data: \(detail)"
        case .badSignature(let detail): return "the CMS signature does not verify: \(detail)"
        }
    }
}
