public import FoundationEssentials

/// A minimal CBOR encoder for what App Attest devices send (definite lengths, shortest heads, the decoder's
/// subset): the sandbox's simulated devices and the tests build attestation objects and assertions with it.
public enum CBOREncoder {
    public static func encode(_ value: CBORValue) -> Data {
        var out = Data()
        write(value, into: &out)
        return out
    }

    private static func head(_ major: UInt8, _ n: UInt64, into out: inout Data) {
        switch n {
        case 0..<24: out.append(major << 5 | UInt8(n))
        case 24..<256: out.append(contentsOf: [major << 5 | 24, UInt8(n)])
        case 256..<65536: out.append(contentsOf: [major << 5 | 25, UInt8(n >> 8), UInt8(n & 0xFF)])
        case 65536..<(1 << 32): out.append(major << 5 | 26); out.append(contentsOf: (0..<4).reversed().map { UInt8(n >> (8 * UInt64($0)) & 0xFF) })
        default: out.append(major << 5 | 27); out.append(contentsOf: (0..<8).reversed().map { UInt8(n >> (8 * UInt64($0)) & 0xFF) })
        }
    }

    private static func write(_ value: CBORValue, into out: inout Data) {
        switch value {
        case .unsigned(let n): head(0, n, into: &out)
        case .negative(let n): head(1, n, into: &out)
        case .bytes(let d): head(2, UInt64(d.count), into: &out); out.append(d)
        case .text(let s): head(3, UInt64(s.utf8.count), into: &out); out.append(contentsOf: Array(s.utf8))
        case .array(let items): head(4, UInt64(items.count), into: &out); items.forEach { write($0, into: &out) }
        case .map(let entries):
            head(5, UInt64(entries.count), into: &out)
            for entry in entries { write(entry.key, into: &out); write(entry.value, into: &out) }
        case .bool(let b): out.append(b ? 0xF5 : 0xF4)
        case .null: out.append(0xF6)
        }
    }
}
