public import FoundationEssentials
import WireVocabulary

extension Data {
    /// Base64url without padding (RFC 4648 §5), as JWS uses it.
    public func base64URLEncodedString() -> String {
        withUnsafeBytes { Base64URL.encode($0) }
    }

    /// Decodes unpadded base64url (as JWS uses it), strictly: `WireVocabulary.Base64URL.decode`.
    public init?(base64URLEncoded string: String) {
        guard let bytes = Base64URL.decode(string) else { return nil }
        self.init(bytes)
    }
}
