public import FoundationEssentials

/// A receipt's payload as a list of fields, in the order they are encoded (duplicates allowed: tests build
/// malformed payloads with it): `SET OF SEQUENCE { type INTEGER, version INTEGER (1), value OCTET STRING }`.
public struct ReceiptPayloadFields: Sendable, Equatable {
    public var fields: [(type: Int, value: Data)]

    public init(_ fields: [(type: Int, value: Data)] = []) { self.fields = fields }

    /// The value of the first field of `type`.
    public subscript(type: Int) -> Data? { fields.first { $0.type == type }?.value }

    /// Replaces every field of `type` (or appends one) with `value`; nil removes them.
    public mutating func set(_ type: Int, _ value: Data?) {
        guard let value else { fields.removeAll { $0.type == type }; return }
        guard let index = fields.firstIndex(where: { $0.type == type }) else { fields.append((type, value)); return }
        fields[index].value = value
        var kept = false
        fields.removeAll { field in
            guard field.type == type else { return false }
            defer { kept = true }
            return kept
        }
    }

    /// The DER encoding (the SET's members in field order, as Apple's: not sorted).
    public var der: Data {
        BER.set(fields.map { BER.sequence(BER.integer($0.type), BER.integer(1), BER.octetString($0.value)) })
    }

    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.fields.count == rhs.fields.count && zip(lhs.fields, rhs.fields).allSatisfy { $0.type == $1.type && $0.value == $1.value }
    }
}
