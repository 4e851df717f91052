/// Why `JSONValue.parse` refused its input, and at which byte (0-based offset into the input).
public struct JSONError: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Reason: Equatable, Sendable {
        /// The input ended inside a value (or was empty).
        case unexpectedEnd
        /// A byte that cannot start or continue the value here.
        case unexpectedByte(UInt8)
        /// A complete value followed by something other than whitespace.
        case trailingData
        /// More than `JSONLimits.maxDepth` arrays and objects open at once.
        case tooDeep(limit: Int)
        /// More than `JSONLimits.maxValues` values.
        case tooManyValues(limit: Int)
        /// The same key twice in one object (keys compare as Swift strings: canonically equivalent
        /// spellings are the same key).
        case duplicateKey(String)
        /// Bytes that are not UTF-8 (overlong forms and encoded surrogates included).
        case invalidUTF8
        /// A `\uD800`-`\uDFFF` escape that is not half of a surrogate pair.
        case loneSurrogate
        /// A backslash followed by anything but `" \ / b f n r t u` and four hex digits.
        case invalidEscape
        /// A raw byte below 0x20 inside a string.
        case controlCharacter
        /// `01`, `-00`: a number whose integer part has a superfluous leading zero.
        case leadingZero
        /// A number with a missing digit (`-`, `1.`, `1e`), or `NaN`, `Infinity`.
        case invalidNumber
        /// A number too large for a `Double`.
        case numberOutOfRange
        /// Something that began like `true`, `false` or `null` and was not.
        case invalidLiteral
    }

    public let reason: Reason
    public let offset: Int

    public init(_ reason: Reason, at offset: Int) {
        self.reason = reason
        self.offset = offset
    }

    /// A short English reason, safe to show a client: a key is shown escaped and cut to 64 characters.
    public var description: String {
        let what: String
        switch reason {
        case .unexpectedEnd: what = "unexpected end of input"
        case .unexpectedByte(let b):
            what = b >= 0x21 && b <= 0x7E ? "unexpected '\(Character(Unicode.Scalar(b)))'" : "unexpected byte 0x\(String(b, radix: 16, uppercase: true))"
        case .trailingData: what = "data after the JSON value"
        case .tooDeep(let limit): what = "nesting deeper than \(limit)"
        case .tooManyValues(let limit): what = "more than \(limit) values"
        case .duplicateKey(let key):
            let shown = key.count > 64 ? String(key.prefix(64)) + "…" : key
            what = "duplicate key \(JSONString.quote(shown))"
        case .invalidUTF8: what = "invalid UTF-8"
        case .loneSurrogate: what = "a lone UTF-16 surrogate escape"
        case .invalidEscape: what = "an invalid escape sequence"
        case .controlCharacter: what = "an unescaped control character in a string"
        case .leadingZero: what = "a number with a leading zero"
        case .invalidNumber: what = "an invalid number"
        case .numberOutOfRange: what = "a number out of range"
        case .invalidLiteral: what = "an invalid literal (expected true, false or null)"
        }
        return "\(what) at byte \(offset)"
    }
}
