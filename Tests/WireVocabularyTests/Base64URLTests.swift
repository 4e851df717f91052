import Foundation
import Testing
import WireVocabulary

/// The one base64url of the server and the client: Foundation's alphabet swapped, unpadded, strict.
@Suite struct VocabularyBase64URLTests {
    @Test func roundTripsAndMatchesFoundation() {
        var generator = SystemRandomNumberGenerator()
        for length in 0..<70 {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let text = Base64URL.encode(bytes)
            let foundation = Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-")
                .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
            #expect(text == foundation, "length \(length)")
            #expect(text.utf8.count == Base64URL.encodedLength(length))
            #expect(Base64URL.decode(text) == bytes, "length \(length)")
        }
    }

    @Test func refusesWhatIsNotCanonical() {
        #expect(Base64URL.decode("Zg==") == nil, "padding")
        #expect(Base64URL.decode("Zh") == nil, "unused bits set")
        #expect(Base64URL.decode("Zg") == [0x66])
        #expect(Base64URL.decode("Z") == nil, "impossible length")
        #expect(Base64URL.decode("a+b/") == nil, "standard alphabet")
        #expect(Base64URL.decode("") == [])
    }
}
