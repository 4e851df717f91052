#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import WireVocabulary

/// The bytes an assertion signs: a JSON object with the server's challenge (TwoBits checks it:
/// `client_data_mismatch`) and, when the token is for one request, the SHA-256 of that request's payload in
/// base64url as `payload_sha256` (for the main API to compare with the request it receives).
struct ClientData {
    let bytes: Data

    init(challenge: String, payload: Data?) {
        // The challenge is base64url and the digest too: no character needs escaping.
        var json = #"{"challenge":"\#(challenge)""#
        if let payload { json += #","payload_sha256":"\#(Base64URL.encode(SystemSHA256.hash(payload)))""# }
        json += "}"
        bytes = Data(json.utf8)
    }

    var hash: Data { SystemSHA256.hash(bytes) }
}
