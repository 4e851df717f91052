import Foundation
import Testing
import TwoBitsCrypto
@testable import TwoBitsClient
import WireVocabulary

/// The library's own SHA-256, base64url and error sentences.
@Suite struct ClientInternalsTests {
    @Test func sha256MatchesOpenSSLOnEveryLengthAroundTheBlockBoundaries() {
        for length in 0..<200 {
            let data = Data(SecureRandom.bytes(length))
            #expect(SystemSHA256.hash(data) == Data(SHA256Digest.hash(data)), "length \(length)")
        }
        #expect(SystemSHA256.hash(Data("abc".utf8)).map { String(format: "%02x", $0) }.joined()
                == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }

    @Test func base64URLRoundTrips() {
        for length in 0..<40 {
            let data = Data(SecureRandom.bytes(length))
            let text = Base64URL.encode(data)
            #expect(!text.contains("=") && !text.contains("+") && !text.contains("/"))
            #expect(Base64URL.decode(text).map { Data($0) } == data)
        }
    }

    @Test func everyErrorSaysWhatToDo() {
        let errors: [TwoBitsClientError] = [
            .deviceBanned, .keyRevoked, .strongTierUnavailable(.throttled), .noTierAvailable(nil, deviceCheck: "unsupported"),
            .deviceTokenRefused, .serviceUnavailable(retryAfterSeconds: 3), .network("down"),
            .refused(status: 400, code: "bad_request", reason: nil), .malformedAnswer("x"),
            .requestProofUnavailable(.unsupported), .requestProofUnavailable(.network), .unsignableRequest("stream"),
        ]
        for error in errors {
            #expect(error.whatToDo.count > 20 && error.whatToDo.hasSuffix("."))
            #expect(error.description.hasSuffix(error.whatToDo))
        }
    }

    @Test func aProofsClientDataIsJSONWhateverThePathHolds() throws {
        let path = #"/v1/q?a="b"&c=\d"# + "\u{1}"
        let data = ProofClientData(challenge: "abc", method: "POST", path: path, body: Data("x".utf8))
        let members = try #require(try JSONSerialization.jsonObject(with: data.bytes) as? [String: String])
        #expect(members == ["challenge": "abc", "method": "POST", "path": path,
                            "body_sha256": Base64URL.encode(SHA256Digest.hash(Data("x".utf8)))])
    }

    @Test func aURLsRequestTargetIsItsEncodedPathAndQuery() {
        #expect(TwoBitsClient.requestTarget(of: URL(string: "https://a.example/v1/n%20b?x=1%2B2")!) == "/v1/n%20b?x=1%2B2")
        #expect(TwoBitsClient.requestTarget(of: URL(string: "https://a.example")!) == "/")
        #expect(TwoBitsClient.requestTarget(of: URL(string: "https://a.example/?")!) == "/?")
        #expect(TwoBitsClient.requestTarget(of: URL(string: "/relative")!) == nil)
    }
}
