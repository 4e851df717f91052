import FoundationEssentials
import TwoBitsCrypto
import WireFormats

/// What a token is bound to: the user's session id or OAuth token, as the main API sees it. Only its digest
/// travels, as claim `bnd`; the value itself is never stored, logged or echoed.
public struct SessionBinding: Sendable {
    /// The longest binding, in bytes of UTF-8 (an OAuth access token fits; a request body does not).
    public static let maxBytes = 1_024

    /// `bnd`: the base64url (no padding) SHA-256 of the binding's UTF-8 bytes.
    public let claim: String

    /// Nil for an empty binding or one over `maxBytes` bytes of UTF-8.
    public init?(_ value: String) {
        let bytes = value.utf8.count
        guard bytes >= 1 else { return nil }
        guard bytes <= Self.maxBytes else { return nil }
        claim = SHA256Digest.hash(Data(value.utf8)).base64URLEncodedString()
    }

    /// Whether a token's `bnd` names this binding; a token without `bnd` names none. Compared in constant
    /// time, so a caller cannot learn the digest byte by byte.
    public func matches(_ bnd: String?) -> Bool {
        guard let bnd else { return false }
        return ConstantTime.equal(Data(claim.utf8), Data(bnd.utf8))
    }
}
