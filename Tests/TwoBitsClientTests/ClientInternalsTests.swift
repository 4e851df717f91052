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
        ]
        for error in errors {
            #expect(error.whatToDo.count > 20 && error.whatToDo.hasSuffix("."))
            #expect(error.description.hasSuffix(error.whatToDo))
        }
    }
}
