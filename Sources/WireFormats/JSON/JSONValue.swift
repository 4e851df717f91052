/// Any JSON value, decoded without losing the difference between `true`, `1` and `"1"`.
/// Used wherever a type must be checked strictly (request bodies, JWS headers and claims, Apple's
/// answers, the configuration file).
///
/// Read with `JSONValue.parse` (strict RFC 8259, linear time, limits in `JSONLimits`); write with
/// `serialized()`. It is `Encodable` for `ServerResponse.json`, but deliberately not `Decodable`:
/// Foundation's decoder accepts duplicate keys and costs cubic time on nested input.
public enum JSONValue: Encodable, Equatable, Sendable {
    case null
    case bool(Bool)
    /// A number without fraction or exponent that fits `Int64`.
    case int(Int64)
    /// Any other number (finite).
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        switch self {
        case .null: try c.encodeNil()
        case .bool(let b): try c.encode(b)
        case .int(let i): try c.encode(i)
        case .double(let d): try c.encode(d)
        case .string(let s): try c.encode(s)
        case .array(let a): try c.encode(a)
        case .object(let o): try c.encode(o)
        }
    }

    public subscript(key: String) -> JSONValue? {
        if case .object(let o) = self { return o[key] }
        return nil
    }

    public var stringValue: String? { if case .string(let s) = self { return s }; return nil }
    public var boolValue: Bool? { if case .bool(let b) = self { return b }; return nil }
    public var intValue: Int64? { if case .int(let i) = self { return i }; return nil }
    public var objectValue: [String: JSONValue]? { if case .object(let o) = self { return o }; return nil }
    public var arrayValue: [JSONValue]? { if case .array(let a) = self { return a }; return nil }
}
