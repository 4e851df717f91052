/// Decodes a raw query string (`a=1&b=x%20y`): the server leaves the request target as received and
/// decodes query values itself, so it can count them first and refuse an encoded NUL.
enum QueryString {
    /// The parameters, or why they are refused. A parameter given twice (after decoding) is refused:
    /// a proxy or a log may have read the first value where we would read the last.
    static func decode(_ raw: Substring, maxParameters: Int) -> Result<[String: String], HTTPRefusal> {
        let pairs = raw.split(separator: "&", omittingEmptySubsequences: true)
        guard pairs.count <= maxParameters else {
            return .failure(.badRequest("too many query parameters (at most \(maxParameters))"))
        }
        var values: [String: String] = [:]
        for pair in pairs {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let key = percentDecoded(parts[0]), let value = percentDecoded(parts.count > 1 ? parts[1] : "") else {
                return .failure(.badRequest("the query string has a malformed or NUL percent-escape"))
            }
            guard values.updateValue(value, forKey: key) == nil else {
                return .failure(.badRequest("a query parameter is given more than once"))
            }
        }
        return .success(values)
    }

    /// `+` is a space, `%XX` a byte; nil for a malformed escape or an encoded NUL.
    static func percentDecoded(_ text: Substring) -> String? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        var iterator = text.utf8.makeIterator()
        while let byte = iterator.next() {
            switch byte {
            case UInt8(ascii: "+"): bytes.append(UInt8(ascii: " "))
            case UInt8(ascii: "%"):
                guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else { return nil }
                let decoded = high << 4 | low
                guard decoded != 0 else { return nil }
                bytes.append(decoded)
            default: bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
