package import FoundationEssentials

/// Reads DER TLVs (definite, minimally encoded lengths; single-byte tags) from untrusted bytes, never past
/// their end. Just enough ASN.1 for a receipt's payload; everything it refuses is a `DERError`.
package struct DERReader {
    private let bytes: [UInt8]
    private(set) var offset: Int
    private let end: Int

    package init(_ data: Data) {
        bytes = [UInt8](data)
        offset = 0
        end = bytes.count
    }

    private init(bytes: [UInt8], offset: Int, end: Int) {
        self.bytes = bytes
        self.offset = offset
        self.end = end
    }

    package var isAtEnd: Bool { offset >= end }

    /// The next element: its tag and a reader over its contents (the reader moves past it).
    package mutating func read() throws(DERError) -> (tag: UInt8, contents: DERReader) {
        guard end - offset >= 2 else { throw .truncated }
        let tag = bytes[offset]
        // Multi-byte tags (low five bits all set) never occur in a receipt's payload.
        guard tag & 0x1F != 0x1F else { throw .unsupportedTag(tag) }
        let first = bytes[offset + 1]
        var length: Int
        var cursor = offset + 2
        if first < 0x80 {
            length = Int(first)
        } else {
            let count = Int(first & 0x7F)
            // 0x80 is BER's indefinite length; more than 3 length bytes cannot fit a receipt (CMS is capped at 1 MiB).
            guard count >= 1, count <= 3 else { throw .badLength }
            guard end - cursor >= count else { throw .truncated }
            length = 0
            for index in 0..<count { length = length << 8 | Int(bytes[cursor + index]) }
            // Minimal: no leading zero byte, and the long form only from 128 on.
            guard bytes[cursor] != 0, length >= 0x80 else { throw .badLength }
            cursor += count
        }
        guard end - cursor >= length else { throw .truncated }
        offset = cursor + length
        return (tag, DERReader(bytes: bytes, offset: cursor, end: cursor + length))
    }

    /// The next element whole (tag, length and contents), as it is encoded.
    package mutating func readElement() throws(DERError) -> Data {
        let start = offset
        _ = try read()
        return Data(bytes[start..<offset])
    }

    /// The next element, which must have `tag`.
    package mutating func read(tag expected: UInt8) throws(DERError) -> DERReader {
        let (tag, contents) = try read()
        guard tag == expected else { throw .unexpectedTag(expected: expected, found: tag) }
        return contents
    }

    /// The next element as a non-negative INTEGER that fits 31 bits, minimally encoded.
    package mutating func readSmallInteger() throws(DERError) -> Int {
        let contents = try read(tag: 0x02)
        let value = Array(contents.remaining)
        guard !value.isEmpty, value.count <= 4 else { throw .badInteger }
        guard value[0] & 0x80 == 0 else { throw .badInteger }
        // A leading zero is only allowed before a byte whose top bit is set.
        if value.count > 1, value[0] == 0, value[1] & 0x80 == 0 { throw .badInteger }
        return value.reduce(0) { $0 << 8 | Int($1) }
    }

    /// The next element as an OCTET STRING's bytes (primitive form only, as DER requires).
    package mutating func readOctetString() throws(DERError) -> Data {
        Data(try read(tag: 0x04).remaining)
    }

    /// The contents not read yet.
    package var remaining: ArraySlice<UInt8> { bytes[offset..<end] }
}
