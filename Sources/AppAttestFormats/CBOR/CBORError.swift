/// Why bytes are not a CBOR item this decoder accepts. `offset` is where the problem was found.
public struct CBORError: Error, Equatable, CustomStringConvertible, Sendable {
    public enum Kind: String, Sendable {
        case truncated
        case indefiniteLength = "indefinite_length"
        case unsupportedType = "unsupported_type"
        case reservedEncoding = "reserved_encoding"
        case tooDeep = "too_deep"
        case tooLarge = "too_large"
        case invalidUTF8 = "invalid_utf8"
        case duplicateKey = "duplicate_key"
        case trailingBytes = "trailing_bytes"
    }

    public let kind: Kind
    public let offset: Int

    public init(_ kind: Kind, at offset: Int) {
        self.kind = kind
        self.offset = offset
    }

    public var description: String { "CBOR \(kind.rawValue) at byte \(offset)" }
}
