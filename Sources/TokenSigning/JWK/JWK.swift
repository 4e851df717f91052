import FoundationEssentials
public import TwoBitsCrypto
import WireFormats

/// A P-256 public key as a JSON Web Key (RFC 7517), with its RFC 7638 thumbprint as `kid`.
public struct JWK: Codable, Sendable, Equatable {
    public let kty: String
    public let crv: String
    public let x: String
    public let y: String
    public let kid: String
    public let use: String
    public let alg: String

    public init(publicKey: P256PublicKey) {
        let (x, y) = publicKey.coordinates
        self.kty = "EC"
        self.crv = "P-256"
        self.x = x.base64URLEncodedString()
        self.y = y.base64URLEncodedString()
        self.kid = JWK.thumbprint(x: self.x, y: self.y)
        self.use = "sig"
        self.alg = "ES256"
    }

    /// RFC 7638: SHA-256 over the required members in lexicographic order, no whitespace, base64url.
    public static func thumbprint(x: String, y: String) -> String {
        let canonical = #"{"crv":"P-256","kty":"EC","x":"\#(x)","y":"\#(y)"}"#
        return SHA256Digest.hash(Data(canonical.utf8)).base64URLEncodedString()
    }
}
