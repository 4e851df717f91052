import Foundation
import WireFormats

/// Base64url: a decoded string is canonical (encoding the bytes gives the string back, so no two strings
/// decode alike); a refused string has a byte outside the alphabet, an impossible length or non-zero
/// unused bits; and the input's bytes, encoded, decode back to themselves.
enum Base64URLCheck {
    static let alphabet = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    static func check(_ input: [UInt8]) -> String? {
        let text = String(decoding: input, as: UTF8.self)
        if let decoded = Data(base64URLEncoded: text) {
            guard decoded.base64URLEncodedString() == text else { return "accepted a non-canonical spelling: \(text.prefix(100))" }
        } else if text.utf8.allSatisfy(alphabet.contains), text.utf8.count % 4 != 1 {
            // Only the unused bits of the last character can be at fault.
            let padded = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
                + String(repeating: "=", count: (4 - text.utf8.count % 4) % 4)
            guard let lenient = Data(base64Encoded: padded), lenient.base64URLEncodedString() != text else {
                return "refused a canonical string: \(text.prefix(100))"
            }
        }
        let encoded = Data(input).base64URLEncodedString()
        guard Data(base64URLEncoded: encoded) == Data(input) else { return "the input's bytes do not round-trip" }
        return nil
    }
}
