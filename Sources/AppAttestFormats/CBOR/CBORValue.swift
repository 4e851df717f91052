public import FoundationEssentials

/// One decoded CBOR data item, of the subset App Attest uses.
public enum CBORValue: Equatable, Sendable {
    case unsigned(UInt64)
    /// A negative integer stored as CBOR does: the value is -1 - n.
    case negative(UInt64)
    case bytes(Data)
    case text(String)
    case array([CBORValue])
    /// Entries in encoded order; keys are unique (the decoder refuses duplicates).
    case map([(key: CBORValue, value: CBORValue)])
    case bool(Bool)
    case null

    public static func == (lhs: CBORValue, rhs: CBORValue) -> Bool {
        switch (lhs, rhs) {
        case (.unsigned(let a), .unsigned(let b)), (.negative(let a), .negative(let b)): return a == b
        case (.bytes(let a), .bytes(let b)): return a == b
        case (.text(let a), .text(let b)): return a == b
        case (.array(let a), .array(let b)): return a == b
        case (.map(let a), .map(let b)):
            return a.count == b.count && zip(a, b).allSatisfy { $0.key == $1.key && $0.value == $1.value }
        case (.bool(let a), .bool(let b)): return a == b
        case (.null, .null): return true
        default: return false
        }
    }

    /// The value of a map entry whose key is this text, or nil (also when self is not a map).
    public subscript(key: String) -> CBORValue? {
        guard case .map(let entries) = self else { return nil }
        return entries.first { $0.key == .text(key) }?.value
    }

    /// The value of a map entry whose key is this integer, or nil.
    public subscript(int key: Int64) -> CBORValue? {
        guard case .map(let entries) = self else { return nil }
        let wanted: CBORValue = key >= 0 ? .unsigned(UInt64(key)) : .negative(UInt64(-1 - key))
        return entries.first { $0.key == wanted }?.value
    }

    public var bytesValue: Data? { if case .bytes(let d) = self { return d } else { return nil } }
    public var textValue: String? { if case .text(let s) = self { return s } else { return nil } }
    public var arrayValue: [CBORValue]? { if case .array(let a) = self { return a } else { return nil } }

    /// The integer value when it fits an Int64.
    public var intValue: Int64? {
        switch self {
        case .unsigned(let n): return n <= UInt64(Int64.max) ? Int64(n) : nil
        case .negative(let n): return n <= UInt64(Int64.max) ? -1 - Int64(n) : nil
        default: return nil
        }
    }
}
