import Foundation
import Testing
import WireFormats

/// Test input only: the system's generator (this module has no crypto to draw from).
private func randomBytes(_ count: Int) -> Data { Data((0..<count).map { _ in UInt8.random(in: .min ... .max) }) }

@Suite struct Base64URLTests {
    @Test func roundTripsEveryLengthFrom0To96() {
        for length in 0...96 {
            let data = randomBytes(length)
            let encoded = data.base64URLEncodedString()
            #expect(!encoded.contains("+") && !encoded.contains("/") && !encoded.contains("="), "length \(length): \(encoded)")
            #expect(Data(base64URLEncoded: encoded) == data, "length \(length)")
        }
    }

    @Test func usesTheURLAlphabet() {
        // 0xFB 0xFF 0xBF encodes to "+/+/" in standard base64.
        let data = Data([0xFB, 0xFF, 0xBF])
        #expect(data.base64EncodedString() == "+/+/")
        #expect(data.base64URLEncodedString() == "-_-_")
        #expect(Data(base64URLEncoded: "-_-_") == data)
    }

    @Test func matchesRFC4648Vectors() {
        let vectors = ["": "", "f": "Zg", "fo": "Zm8", "foo": "Zm9v", "foob": "Zm9vYg", "fooba": "Zm9vYmE", "foobar": "Zm9vYmFy"]
        for (plain, encoded) in vectors {
            #expect(Data(plain.utf8).base64URLEncodedString() == encoded)
            #expect(Data(base64URLEncoded: encoded) == Data(plain.utf8))
        }
    }

    @Test(arguments: ["ab+c", "ab/c", "ab c", "abc\n", "ab.c", "ab*c", "abé", "Zm9v!", "Zg=="])
    func rejectsCharactersOutsideTheURLAlphabet(_ text: String) {
        // "=" is outside the alphabet too: JWS (RFC 7515 §2) forbids padding.
        #expect(Data(base64URLEncoded: text) == nil)
    }

    /// "Zg" is the only spelling of "f": "Zh".."Zv" differ only in bits past the last byte, and a JWS
    /// whose signature is spelled another way must not verify as the same token.
    @Test func rejectsNonZeroUnusedBits() {
        #expect(Data(base64URLEncoded: "Zg") == Data("f".utf8))
        #expect(Data(base64URLEncoded: "Zh") == nil)
        #expect(Data(base64URLEncoded: "Zv") == nil)
        #expect(Data(base64URLEncoded: "Zm8") == Data("fo".utf8))
        #expect(Data(base64URLEncoded: "Zm9") == nil)
        #expect(Data(base64URLEncoded: "Zm_") == nil)
    }

    @Test func rejectsImpossibleLengths() {
        // A single leftover character can never encode a whole byte.
        #expect(Data(base64URLEncoded: "Zm9vY") == nil)
        #expect(Data(base64URLEncoded: "A") == nil)
    }
}

@Suite struct HexTests {
    @Test func roundTrips() {
        for length in [0, 1, 2, 16, 31, 32, 33, 255] {
            let data = randomBytes(length)
            let hex = data.hexString
            #expect(hex.count == length * 2)
            #expect(hex == hex.lowercased())
            #expect(Data(hexString: hex) == data)
            #expect(Data(hexString: hex.uppercased()) == data)
        }
    }

    @Test func knownValue() {
        #expect(Data([0x00, 0x01, 0x7F, 0x80, 0xAB, 0xFF]).hexString == "00017f80abff")
        #expect(Data(hexString: "00017F80abFF") == Data([0x00, 0x01, 0x7F, 0x80, 0xAB, 0xFF]))
    }

    @Test(arguments: ["abc", "0g", "zz", "0x12", " 12", "12 ", "é1"])
    func rejectsBadInput(_ text: String) {
        #expect(Data(hexString: text) == nil)
    }
}
