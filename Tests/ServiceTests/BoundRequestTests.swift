import Foundation
import Testing
import UseCases
import WireVocabulary

/// The request proof's comparison alone: the request the app signed against the one the main API received, field
/// by field and exactly, and the client data that carries it read strictly.
@Suite struct BoundRequestTests {
    static let digest = "47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU"   // SHA-256 of zero bytes
    let received = BoundRequest(method: "POST", path: "/v1/payouts?x=1", bodySHA256: Self.digest)

    @Test func theSameRequestMatches() {
        #expect(received.mismatch(signed: BoundRequest(method: "POST", path: "/v1/payouts?x=1", bodySHA256: Self.digest)) == nil)
    }

    @Test func eachFieldIsComparedExactly() {
        let methods = ["GET", "post", "PUT", "POST ", ""]
        for method in methods {
            #expect(received.mismatch(signed: BoundRequest(method: method, path: received.path, bodySHA256: Self.digest)) == .methodMismatch, "\(method)")
        }
        // No normalisation: each of these is another request target to a main API that tells them apart.
        let paths = ["/v1/payouts", "/v1/payouts?x=2", "/v1/payouts?x=1&y=2", "/v1/payouts/?x=1", "/v1/Payouts?x=1", "/v1/payouts?x=%31",
                     "/v1//payouts?x=1", "v1/payouts?x=1", "/v1/payouts?x=1#f"]
        for path in paths {
            #expect(received.mismatch(signed: BoundRequest(method: "POST", path: path, bodySHA256: Self.digest)) == .pathMismatch, "\(path)")
        }
        var oneBitOff = Array(Self.digest.utf8)
        oneBitOff[10] ^= 0x01
        for digest in [String(decoding: oneBitOff, as: UTF8.self), Self.digest + "=", "", Self.digest.lowercased()] {
            #expect(received.mismatch(signed: BoundRequest(method: "POST", path: received.path, bodySHA256: digest)) == .payloadMismatch, "\(digest)")
        }
    }

    @Test func theFirstDifferenceIsNamedInTheOrderMethodPathBody() {
        #expect(received.mismatch(signed: BoundRequest(method: "PUT", path: "/other", bodySHA256: "x")) == .methodMismatch)
        #expect(received.mismatch(signed: BoundRequest(method: "POST", path: "/other", bodySHA256: "x")) == .pathMismatch)
    }

    @Test func clientDataIsExactlyTheFourStrings() throws {
        let read = try #require(RequestProofClientData(Data(#"{"challenge":"c","method":"POST","path":"/p?q=1","body_sha256":"d"}"#.utf8)))
        #expect(read.challenge == "c" && read.request == BoundRequest(method: "POST", path: "/p?q=1", bodySHA256: "d"))
        // Any member order and spacing: the signature is over the bytes, the comparison over the members.
        let reordered = RequestProofClientData(Data(#" { "path" : "/p?q=1", "body_sha256":"d", "method":"POST", "challenge":"c" } "#.utf8))
        #expect(reordered == read)
        let refused = [
            #"{"challenge":"c","method":"POST","path":"/p"}"#,                                           // a member missing
            #"{"challenge":"c","method":"POST","path":"/p","body_sha256":"d","amount":1}"#,              // one more
            #"{"challenge":"c","method":"POST","path":"/p","body_sha256":"d","path":"/q"}"#,             // a duplicate
            #"{"challenge":"c","method":"POST","path":"/p","body_sha256":1}"#,                           // not a string
            #"{"challenge":"c","method":null,"path":"/p","body_sha256":"d"}"#,
            #"["c","POST","/p","d"]"#, #"{"challenge":"c"}"#, "", "not json",
            #"{"challenge":"c","method":"POST","path":"/p","body_sha256":"d"} x"#,                       // trailing data
        ]
        for text in refused { #expect(RequestProofClientData(Data(text.utf8)) == nil, "\(text)") }
    }
}
