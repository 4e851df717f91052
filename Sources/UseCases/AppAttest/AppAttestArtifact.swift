import FoundationEssentials
import TwoBitsCrypto
import WireFormats

/// The artifact handed out with an attestation's token: the key id, in a form that is safe in URLs and
/// JSON alike and recognisably ours (`aa1.` + base64url of the 32 key-id bytes). It grants nothing by
/// itself; an assertion must still be signed by the key.
public struct AppAttestArtifact: Sendable, Equatable {
    public let value: String
    /// The key id as `generateKey` returned it (standard base64).
    public let keyID: String

    static let prefix = "aa1."

    init(keyID: String) {
        self.keyID = keyID
        value = Self.prefix + (Data(base64Encoded: keyID)?.base64URLEncodedString() ?? "")
    }

    /// The artifact of a stored key id.
    public static func value(forKeyID keyID: String) -> String { AppAttestArtifact(keyID: keyID).value }

    /// Reads an artifact this server issued; nil for anything else.
    public init?(_ value: String) {
        guard value.hasPrefix(Self.prefix), let bytes = Data(base64URLEncoded: String(value.dropFirst(Self.prefix.count))), bytes.count == 32 else { return nil }
        self.value = value
        keyID = bytes.base64EncodedString()
    }

    /// The token subject when no install id came with the request: the key, not the person.
    var subject: String { "key_" + String(value.dropFirst(Self.prefix.count)) }
}
