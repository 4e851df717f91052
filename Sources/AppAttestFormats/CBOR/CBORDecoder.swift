public import FoundationEssentials

/// A strict CBOR (RFC 8949) decoder for the subset App Attest sends: unsigned and negative integers,
/// byte and text strings, arrays, maps, false, true and null, all of definite length.
///
/// It reads attacker-supplied bytes: every length is checked against the bytes that remain before
/// anything is allocated, nesting and sizes are bounded, and every refusal is a `CBORError`.
/// Tags, floats, undefined, simple values and indefinite lengths are refused.
public struct CBORDecoder: Sendable {
    public let limits: CBORLimits

    public init(limits: CBORLimits = .appAttest) { self.limits = limits }

    /// Decodes exactly one item that fills `data`.
    public func decode(_ data: Data) throws(CBORError) -> CBORValue {
        let (value, end) = try decodePrefix(data, from: 0)
        guard end == data.count else { throw CBORError(.trailingBytes, at: end) }
        return value
    }

    /// Decodes one item starting at byte `offset` of `data` (offsets are from the start of `data`),
    /// returning it and the offset just after it. Items that follow are left alone.
    public func decodePrefix(_ data: Data, from offset: Int) throws(CBORError) -> (CBORValue, Int) {
        let bytes = [UInt8](data)
        guard offset >= 0, offset <= bytes.count else { throw CBORError(.truncated, at: offset) }
        var reader = Reader(bytes: bytes, position: offset, limits: limits)
        let value = try reader.item(depth: 1)
        return (value, reader.position)
    }
}

extension CBORDecoder {
    fileprivate struct Reader {
        let bytes: [UInt8]
        var position: Int
        let limits: CBORLimits

        var remaining: Int { bytes.count - position }

        mutating func byte() throws(CBORError) -> UInt8 {
            guard position < bytes.count else { throw CBORError(.truncated, at: position) }
            defer { position += 1 }
            return bytes[position]
        }

        /// The argument that follows an initial byte's additional information.
        mutating func argument(_ info: UInt8, at start: Int) throws(CBORError) -> UInt64 {
            switch info {
            case 0..<24: return UInt64(info)
            case 24, 25, 26, 27:
                let width = 1 << Int(info - 24)
                guard remaining >= width else { throw CBORError(.truncated, at: position) }
                var value: UInt64 = 0
                for _ in 0..<width { value = value << 8 | UInt64(bytes[position]); position += 1 }
                return value
            case 31: throw CBORError(.indefiniteLength, at: start)
            default: throw CBORError(.reservedEncoding, at: start)
            }
        }

        /// A length checked against the limit and, before any allocation, against the bytes left
        /// (each element needs at least `minimumBytesEach`).
        mutating func length(_ info: UInt8, at start: Int, limit: Int, minimumBytesEach: Int) throws(CBORError) -> Int {
            let declared = try argument(info, at: start)
            guard declared <= UInt64(limit) else { throw CBORError(.tooLarge, at: start) }
            let count = Int(declared)
            guard count <= remaining / minimumBytesEach else { throw CBORError(.truncated, at: position) }
            return count
        }

        mutating func item(depth: Int) throws(CBORError) -> CBORValue {
            let start = position
            let initial = try byte()
            let major = initial >> 5
            let info = initial & 0x1F
            switch major {
            case 0: return .unsigned(try argument(info, at: start))
            case 1: return .negative(try argument(info, at: start))
            case 2, 3:
                let count = try length(info, at: start, limit: limits.maxStringLength, minimumBytesEach: 1)
                let slice = bytes[position..<position + count]
                position += count
                if major == 2 { return .bytes(Data(slice)) }
                guard let text = String(validating: slice, as: UTF8.self) else { throw CBORError(.invalidUTF8, at: start) }
                return .text(text)
            case 4:
                guard depth <= limits.maxDepth else { throw CBORError(.tooDeep, at: start) }
                let count = try length(info, at: start, limit: limits.maxContainerCount, minimumBytesEach: 1)
                var items: [CBORValue] = []
                items.reserveCapacity(count)
                for _ in 0..<count { items.append(try item(depth: depth + 1)) }
                return .array(items)
            case 5:
                guard depth <= limits.maxDepth else { throw CBORError(.tooDeep, at: start) }
                let count = try length(info, at: start, limit: limits.maxContainerCount, minimumBytesEach: 2)
                var entries: [(key: CBORValue, value: CBORValue)] = []
                entries.reserveCapacity(count)
                for _ in 0..<count {
                    let keyStart = position
                    let key = try item(depth: depth + 1)
                    // Maps are small (a handful of entries): a linear scan beats hashing here.
                    if entries.contains(where: { $0.key == key }) { throw CBORError(.duplicateKey, at: keyStart) }
                    entries.append((key, try item(depth: depth + 1)))
                }
                return .map(entries)
            case 7:
                switch info {
                case 20: return .bool(false)
                case 21: return .bool(true)
                case 22: return .null
                case 31: throw CBORError(.indefiniteLength, at: start)
                default: throw CBORError(.unsupportedType, at: start)
                }
            default:
                // Major type 6: tags are not part of App Attest's encoding.
                throw CBORError(.unsupportedType, at: start)
            }
        }
    }
}
