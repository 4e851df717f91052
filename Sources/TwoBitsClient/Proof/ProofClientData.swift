#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import WireVocabulary

/// The bytes a request proof's assertion signs: a JSON object of exactly `challenge`, `method`, `path` and
/// `body_sha256` (base64url of SHA-256 of the exact body bytes). TwoBits compares each member with what the
/// main API received, exactly.
struct ProofClientData {
    let bytes: Data

    init(challenge: String, method: String, path: String, body: Data) {
        // The challenge and the digest are base64url; the method and the path are the app's, escaped.
        let json = #"{"challenge":"\#(challenge)","method":"\#(Self.escaped(method))","path":"\#(Self.escaped(path))","body_sha256":"\#(Base64URL.encode(SystemSHA256.hash(body)))"}"#
        bytes = Data(json.utf8)
    }

    var hash: Data { SystemSHA256.hash(bytes) }

    /// A JSON string's content: quotes, backslashes and control characters escaped, the rest as it is.
    static func escaped(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
