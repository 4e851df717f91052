/// Why DER bytes were refused.
package enum DERError: Error, Equatable, CustomStringConvertible {
    case truncated
    case badLength
    case unsupportedTag(UInt8)
    case unexpectedTag(expected: UInt8, found: UInt8)
    case badInteger

    package var description: String {
        switch self {
        case .truncated: return "an element runs past its end"
        case .badLength: return "a length is indefinite, too long or not minimally encoded"
        case .unsupportedTag(let tag): return "multi-byte tag 0x\(String(tag, radix: 16))"
        case .unexpectedTag(let expected, let found): return "tag 0x\(String(found, radix: 16)) where 0x\(String(expected, radix: 16)) was expected"
        case .badInteger: return "an INTEGER that is negative, larger than 31 bits or not minimally encoded"
        }
    }
}
