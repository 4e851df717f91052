public import FoundationEssentials
public import WireFormats
import WireVocabulary

/// Compact JWS (header.payload.signature) with ES256, the only algorithm TwoBits signs or accepts.
public enum JWS {
    /// Signs a header and claims (already serialised JSON) into a compact JWS.
    public static func sign(headerJSON: Data, claimsJSON: Data, signer: ES256Signer) -> String {
        // One buffer for the whole token: header.claims is signed in place, the signature appended.
        let headerLength = Base64URL.encodedLength(headerJSON.count)
        let inputLength = headerLength + 1 + Base64URL.encodedLength(claimsJSON.count)
        return String(unsafeUninitializedCapacity: inputLength + 1 + Base64URL.encodedLength(64)) { out in
            var o = headerJSON.withUnsafeBytes { Base64URL.write($0, into: out) }
            out[o] = 0x2E; o += 1
            o += claimsJSON.withUnsafeBytes { Base64URL.write($0, into: UnsafeMutableBufferPointer(rebasing: out[o...])) }
            let signature = signer.sign(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(out)[0..<o]))
            out[o] = 0x2E; o += 1
            o += signature.withUnsafeBytes { Base64URL.write($0, into: UnsafeMutableBufferPointer(rebasing: out[o...])) }
            return o
        }
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
