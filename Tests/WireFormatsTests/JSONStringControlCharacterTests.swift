import Foundation
import Testing
import WireFormats

/// `JSONString.quote` for every character below 0x20 and the two that must be escaped: Foundation's
/// parser (an independent one) reads each quoted string back to the original.
@Suite struct JSONStringControlCharacterTests {
    @Test func everyControlCharacterRoundTripsThroughFoundation() throws {
        var samples = (0..<0x20).map { "a" + String(UnicodeScalar(UInt8($0))) + "b" }
        samples += ["\"", "\\", "quote \" and \\ backslash", "é ✓ 😀", "\u{7F}", ""]
        for s in samples {
            let quoted = JSONString.quote(s)
            let decoded = try JSONSerialization.jsonObject(with: Data(("[" + quoted + "]").utf8)) as? [String]
            #expect(decoded == [s], "\(Array(s.unicodeScalars).map(\.value)) → \(quoted)")
        }
        #expect(JSONString.quote("\u{01}") == #""\u0001""#)
        #expect(JSONString.quote("\u{1f}") == #""\u001f""#)
    }
}
