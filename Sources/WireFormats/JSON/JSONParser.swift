/// The byte-level parser behind `JSONValue.parse`: strict RFC 8259, one pass over the input, no
/// backtracking, so its time is linear in the input (and bounded by `JSONLimits` besides).
///
/// Recursive descent; the recursion depth is bounded by `JSONLimits.maxDepth` (at most 512).
struct JSONParser {
    private let bytes: UnsafeBufferPointer<UInt8>
    private let limits: JSONLimits
    private var index = 0
    private var values = 0

    init(bytes: UnsafeBufferPointer<UInt8>, limits: JSONLimits) {
        self.bytes = bytes
        self.limits = limits
    }

    /// One value, surrounded by optional whitespace, and nothing else.
    mutating func document() throws(JSONError) -> JSONValue {
        skipWhitespace()
        let result = try value(depth: 0)
        skipWhitespace()
        guard index == bytes.count else { throw JSONError(.trailingData, at: index) }
        return result
    }

    // MARK: Values

    private mutating func value(depth: Int) throws(JSONError) -> JSONValue {
        guard index < bytes.count else { throw JSONError(.unexpectedEnd, at: index) }
        values += 1
        guard values <= limits.maxValues else { throw JSONError(.tooManyValues(limit: limits.maxValues), at: index) }
        switch bytes[index] {
        case 0x7B: return try object(depth: depth + 1)
        case 0x5B: return try array(depth: depth + 1)
        case 0x22: return .string(try string())
        case 0x74: try literal("true"); return .bool(true)
        case 0x66: try literal("false"); return .bool(false)
        case 0x6E: try literal("null"); return .null
        case 0x2D, 0x30...0x39: return try number()
        case 0x4E, 0x49: throw JSONError(.invalidNumber, at: index) // NaN, Infinity
        case let b: throw JSONError(.unexpectedByte(b), at: index)
        }
    }

    private mutating func array(depth: Int) throws(JSONError) -> JSONValue {
        guard depth <= limits.maxDepth else { throw JSONError(.tooDeep(limit: limits.maxDepth), at: index) }
        index += 1
        skipWhitespace()
        var elements: [JSONValue] = []
        if index < bytes.count, bytes[index] == 0x5D {
            index += 1
            return .array(elements)
        }
        while true {
            elements.append(try value(depth: depth))
            skipWhitespace()
            guard index < bytes.count else { throw JSONError(.unexpectedEnd, at: index) }
            switch bytes[index] {
            case 0x2C:
                index += 1
                skipWhitespace()
            case 0x5D:
                index += 1
                return .array(elements)
            case let b: throw JSONError(.unexpectedByte(b), at: index)
            }
        }
    }

    private mutating func object(depth: Int) throws(JSONError) -> JSONValue {
        guard depth <= limits.maxDepth else { throw JSONError(.tooDeep(limit: limits.maxDepth), at: index) }
        index += 1
        skipWhitespace()
        var members: [String: JSONValue] = [:]
        if index < bytes.count, bytes[index] == 0x7D {
            index += 1
            return .object(members)
        }
        while true {
            guard index < bytes.count else { throw JSONError(.unexpectedEnd, at: index) }
            guard bytes[index] == 0x22 else { throw JSONError(.unexpectedByte(bytes[index]), at: index) }
            let keyOffset = index
            let key = try string()
            // A second value for a key is refused, never silently dropped or preferred.
            guard members.index(forKey: key) == nil else { throw JSONError(.duplicateKey(key), at: keyOffset) }
            skipWhitespace()
            guard index < bytes.count else { throw JSONError(.unexpectedEnd, at: index) }
            guard bytes[index] == 0x3A else { throw JSONError(.unexpectedByte(bytes[index]), at: index) }
            index += 1
            skipWhitespace()
            members[key] = try value(depth: depth)
            skipWhitespace()
            guard index < bytes.count else { throw JSONError(.unexpectedEnd, at: index) }
            switch bytes[index] {
            case 0x2C:
                index += 1
                skipWhitespace()
            case 0x7D:
                index += 1
                return .object(members)
            case let b: throw JSONError(.unexpectedByte(b), at: index)
            }
        }
    }

    private mutating func literal(_ word: StaticString) throws(JSONError) {
        let start = index
        let expected = UnsafeBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount)
        for b in expected {
            guard index < bytes.count else { throw JSONError(.unexpectedEnd, at: index) }
            guard bytes[index] == b else { throw JSONError(.invalidLiteral, at: start) }
            index += 1
        }
    }

    // MARK: Numbers

    private mutating func number() throws(JSONError) -> JSONValue {
        let start = index
        let negative = bytes[index] == 0x2D
        if negative { index += 1 }
        guard index < bytes.count else { throw JSONError(.invalidNumber, at: index) }
        if bytes[index] == 0x30 {
            index += 1
            if index < bytes.count, Self.isDigit(bytes[index]) { throw JSONError(.leadingZero, at: index - 1) }
        } else if Self.isDigit(bytes[index]) {
            skipDigits()
        } else {
            throw JSONError(.invalidNumber, at: index)
        }
        let integerEnd = index
        var integral = true
        if index < bytes.count, bytes[index] == 0x2E {
            integral = false
            index += 1
            guard index < bytes.count, Self.isDigit(bytes[index]) else { throw JSONError(.invalidNumber, at: index) }
            skipDigits()
        }
        if index < bytes.count, bytes[index] | 0x20 == 0x65 {
            integral = false
            index += 1
            if index < bytes.count, bytes[index] == 0x2B || bytes[index] == 0x2D { index += 1 }
            guard index < bytes.count, Self.isDigit(bytes[index]) else { throw JSONError(.invalidNumber, at: index) }
            skipDigits()
        }
        if integral, let i = Self.int64(UnsafeBufferPointer(rebasing: bytes[(negative ? start + 1 : start)..<integerEnd]), negative: negative) {
            return .int(i)
        }
        // The grammar is checked above, so strtod sees only JSON number syntax.
        guard let d = Double(String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)), d.isFinite else {
            throw JSONError(.numberOutOfRange, at: start)
        }
        return .double(d)
    }

    private mutating func skipDigits() {
        while index < bytes.count, Self.isDigit(bytes[index]) { index += 1 }
    }

    private static func isDigit(_ b: UInt8) -> Bool { b >= 0x30 && b <= 0x39 }

    /// The digits as an Int64, or nil when they do not fit.
    private static func int64(_ digits: UnsafeBufferPointer<UInt8>, negative: Bool) -> Int64? {
        guard digits.count <= 19 else { return nil }
        var value: Int64 = 0
        for b in digits {
            let (shifted, o1) = value.multipliedReportingOverflow(by: 10)
            let digit = Int64(b &- 0x30)
            let (next, o2) = negative ? shifted.subtractingReportingOverflow(digit) : shifted.addingReportingOverflow(digit)
            if o1 || o2 { return nil }
            value = next
        }
        return value
    }

    // MARK: Strings

    private mutating func string() throws(JSONError) -> String {
        index += 1
        let start = index
        skipPlainASCII()
        // Fast path: no escapes, so the bytes between the quotes are the string (already checked UTF-8).
        while index < bytes.count {
            let b = bytes[index]
            if b == 0x22 {
                let s = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
                index += 1
                return s
            }
            if b == 0x5C { return try escapedString(from: start) }
            if b < 0x20 { throw JSONError(.controlCharacter, at: index) }
            if b < 0x80 { index += 1 } else { try skipUTF8Scalar() }
        }
        throw JSONError(.unexpectedEnd, at: index)
    }

    /// Skips eight bytes at a time while none of them ends the fast path: a quote, a backslash, a control
    /// byte or a non-ASCII byte (a device token is 3 KB of base64 in one string). The byte loop after it
    /// takes the rest, and checks every byte this stops at.
    private mutating func skipPlainASCII() {
        guard let base = bytes.baseAddress else { return }
        let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
        while index + 8 <= bytes.count {
            let word = UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self)
            let quote = word ^ (ones &* 0x22), backslash = word ^ (ones &* 0x5C)
            // A byte is zero in `x` when (x - 1) borrows into its high bit while x's own high bit is clear.
            let special = ((quote &- ones) & ~quote) | ((backslash &- ones) & ~backslash)
                | ((word &- ones &* 0x20) & ~word) // a byte below 0x20
                | word // a byte of 0x80 or more
            guard special & highs == 0 else { return }
            index += 8
        }
    }

    private mutating func escapedString(from start: Int) throws(JSONError) -> String {
        var buffer: [UInt8] = []
        buffer.reserveCapacity(index - start + 16)
        buffer.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<index]))
        while index < bytes.count {
            let b = bytes[index]
            switch b {
            case 0x22:
                index += 1
                return String(decoding: buffer, as: UTF8.self)
            case 0x5C:
                try unescape(into: &buffer)
            case 0..<0x20:
                throw JSONError(.controlCharacter, at: index)
            case 0x20..<0x80:
                buffer.append(b)
                index += 1
            default:
                let scalarStart = index
                try skipUTF8Scalar()
                buffer.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[scalarStart..<index]))
            }
        }
        throw JSONError(.unexpectedEnd, at: index)
    }

    /// Decodes one escape at `index` (the backslash) and appends its UTF-8.
    private mutating func unescape(into buffer: inout [UInt8]) throws(JSONError) {
        let escape = index
        index += 1
        guard index < bytes.count else { throw JSONError(.unexpectedEnd, at: index) }
        let b = bytes[index]
        index += 1
        switch b {
        case 0x22, 0x5C, 0x2F: buffer.append(b)
        case 0x62: buffer.append(0x08)
        case 0x66: buffer.append(0x0C)
        case 0x6E: buffer.append(0x0A)
        case 0x72: buffer.append(0x0D)
        case 0x74: buffer.append(0x09)
        case 0x75:
            let unit = try hex4()
            var scalar = unit
            if (0xD800...0xDBFF).contains(unit) {
                guard index + 1 < bytes.count, bytes[index] == 0x5C, bytes[index + 1] == 0x75 else {
                    throw JSONError(.loneSurrogate, at: escape)
                }
                index += 2
                let low = try hex4()
                guard (0xDC00...0xDFFF).contains(low) else { throw JSONError(.loneSurrogate, at: escape) }
                scalar = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)
            } else if (0xDC00...0xDFFF).contains(unit) {
                throw JSONError(.loneSurrogate, at: escape)
            }
            Self.appendUTF8(scalar, to: &buffer)
        default:
            throw JSONError(.invalidEscape, at: escape)
        }
    }

    private mutating func hex4() throws(JSONError) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard index < bytes.count else { throw JSONError(.unexpectedEnd, at: index) }
            let b = bytes[index]
            let digit: UInt32
            switch b {
            case 0x30...0x39: digit = UInt32(b - 0x30)
            case 0x41...0x46: digit = UInt32(b - 0x41 + 10)
            case 0x61...0x66: digit = UInt32(b - 0x61 + 10)
            default: throw JSONError(.invalidEscape, at: index)
            }
            value = value << 4 | digit
            index += 1
        }
        return value
    }

    private static func appendUTF8(_ scalar: UInt32, to buffer: inout [UInt8]) {
        switch scalar {
        case 0..<0x80:
            buffer.append(UInt8(scalar))
        case 0x80..<0x800:
            buffer.append(UInt8(0xC0 | scalar >> 6))
            buffer.append(UInt8(0x80 | scalar & 0x3F))
        case 0x800..<0x10000:
            buffer.append(UInt8(0xE0 | scalar >> 12))
            buffer.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            buffer.append(UInt8(0x80 | scalar & 0x3F))
        default:
            buffer.append(UInt8(0xF0 | scalar >> 18))
            buffer.append(UInt8(0x80 | scalar >> 12 & 0x3F))
            buffer.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            buffer.append(UInt8(0x80 | scalar & 0x3F))
        }
    }

    /// Steps over one multi-byte UTF-8 scalar (RFC 3629: no overlong forms, no surrogates, at most U+10FFFF).
    private mutating func skipUTF8Scalar() throws(JSONError) {
        let lead = bytes[index]
        let length: Int
        var lower: UInt8 = 0x80
        var upper: UInt8 = 0xBF
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0: length = 3; lower = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED: length = 3; upper = 0x9F
        case 0xF0: length = 4; lower = 0x90
        case 0xF1...0xF3: length = 4
        case 0xF4: length = 4; upper = 0x8F
        default: throw JSONError(.invalidUTF8, at: index)
        }
        guard index + length <= bytes.count else { throw JSONError(.invalidUTF8, at: index) }
        guard bytes[index + 1] >= lower, bytes[index + 1] <= upper else { throw JSONError(.invalidUTF8, at: index) }
        for k in 2..<length where bytes[index + k] & 0xC0 != 0x80 { throw JSONError(.invalidUTF8, at: index) }
        index += length
    }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }
}
