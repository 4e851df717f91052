public import FoundationEssentials

extension JSONValue {
    /// Parses one JSON document (RFC 8259, strictly): UTF-8 only, no duplicate keys, no lone
    /// surrogates, no leading zeros, no NaN or Infinity, nothing after the value, within `limits`.
    /// Integers that fit `Int64` become `.int`, every other number `.double`. Linear in the input.
    public static func parse(_ bytes: some ContiguousBytes, limits: JSONLimits = .default) throws(JSONError) -> JSONValue {
        let result = bytes.withUnsafeBytes { raw -> Result<JSONValue, JSONError> in
            var parser = JSONParser(bytes: raw.assumingMemoryBound(to: UInt8.self), limits: limits)
            do throws(JSONError) { return .success(try parser.document()) } catch { return .failure(error) }
        }
        return try result.get()
    }

    /// Parses the UTF-8 of `text` (see `parse(_:limits:)` for bytes).
    public static func parse(_ text: String, limits: JSONLimits = .default) throws(JSONError) -> JSONValue {
        var text = text
        let result = text.withUTF8 { utf8 -> Result<JSONValue, JSONError> in
            var parser = JSONParser(bytes: utf8, limits: limits)
            do throws(JSONError) { return .success(try parser.document()) } catch { return .failure(error) }
        }
        return try result.get()
    }
}
