import Foundation

/// Compact JWS (header.payload.signature) with ES256, the only algorithm TwoBits signs or accepts.
public enum JWS {
    /// Signs a header and claims (already serialised JSON) into a compact JWS.
    public static func sign(headerJSON: Data, claimsJSON: Data, signer: ES256Signer) -> String {
        let signingInput = headerJSON.base64URLEncodedString() + "." + claimsJSON.base64URLEncodedString()
        let signature = signer.sign(Data(signingInput.utf8))
        return signingInput + "." + signature.base64URLEncodedString()
    }

    /// The three decoded parts of a compact JWS, without any verification.
    public struct Parts: Sendable {
        public let header: [String: JSONValue]
        public let claims: [String: JSONValue]
        public let signingInput: Data
        public let signature: Data
    }

    /// Splits and decodes a compact JWS; nil when it is not three base64url parts whose first two are
    /// JSON objects (parsed strictly: a duplicate claim or header field makes the token malformed).
    public static func decode(_ token: String) -> Parts? {
        let pieces = token.split(separator: ".", omittingEmptySubsequences: false)
        guard pieces.count == 3,
              let h = Data(base64URLEncoded: String(pieces[0])),
              let c = Data(base64URLEncoded: String(pieces[1])),
              let s = Data(base64URLEncoded: String(pieces[2])),
              let header = (try? JSONValue.parse(h))?.objectValue,
              let claims = (try? JSONValue.parse(c))?.objectValue
        else { return nil }
        return Parts(header: header, claims: claims, signingInput: Data((pieces[0] + "." + pieces[1]).utf8), signature: s)
    }
}
