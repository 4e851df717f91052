import FoundationEssentials
import TwoBitsCrypto
import WireFormats

/// Walks a JSON object field by field, remembering the path, so every error names its field.
/// Unknown fields are errors too: a typo must not silently fall back to a default.
struct ConfigReader {
    let path: String
    let object: [String: JSONValue]
    private var seen: Set<String> = []

    init(path: String, value: JSONValue?) throws(ConfigurationError) {
        guard case .object(let o)? = value else { throw ConfigurationError(path, "must be a JSON object") }
        self.path = path
        self.object = o
    }

    func field(_ name: String) -> String { path.isEmpty ? name : "\(path).\(name)" }

    mutating func raw(_ name: String) -> JSONValue? {
        seen.insert(name)
        if case .null? = object[name] { return nil }
        return object[name]
    }

    mutating func string(_ name: String, default value: String? = nil) throws(ConfigurationError) -> String {
        guard let v = raw(name) else {
            if let value { return value }
            throw ConfigurationError(field(name), "is required")
        }
        guard let s = v.stringValue, !s.isEmpty else { throw ConfigurationError(field(name), "must be a non-empty string") }
        return s
    }

    mutating func optionalString(_ name: String) throws(ConfigurationError) -> String? {
        guard raw(name) != nil else { return nil }
        return try string(name)
    }

    mutating func int(_ name: String, default value: Int, range: ClosedRange<Int>) throws(ConfigurationError) -> Int {
        guard let v = raw(name) else { return value }
        guard let i = v.intValue, range.contains(Int(i)) else {
            throw ConfigurationError(field(name), "must be a whole number from \(range.lowerBound) to \(range.upperBound)")
        }
        return Int(i)
    }

    mutating func optionalInt(_ name: String, range: ClosedRange<Int>) throws(ConfigurationError) -> Int? {
        guard raw(name) != nil else { return nil }
        return try int(name, default: 0, range: range)
    }

    mutating func optionalDouble(_ name: String, range: ClosedRange<Double>) throws(ConfigurationError) -> Double? {
        guard let v = raw(name) else { return nil }
        let number: Double?
        switch v {
        case .int(let i): number = Double(i)
        case .double(let d): number = d
        default: number = nil
        }
        guard let number, range.contains(number) else {
            throw ConfigurationError(field(name), "must be a number from \(range.lowerBound) to \(range.upperBound)")
        }
        return number
    }

    mutating func bool(_ name: String, default value: Bool) throws(ConfigurationError) -> Bool {
        guard let v = raw(name) else { return value }
        guard case .bool(let b) = v else { throw ConfigurationError(field(name), "must be true or false") }
        return b
    }

    mutating func object(_ name: String) throws(ConfigurationError) -> ConfigReader? {
        guard let v = raw(name) else { return nil }
        return try ConfigReader(path: field(name), value: v)
    }

    mutating func array(_ name: String) throws(ConfigurationError) -> [JSONValue]? {
        guard let v = raw(name) else { return nil }
        guard case .array(let a) = v else { throw ConfigurationError(field(name), "must be a JSON array") }
        return a
    }

    /// Fails on any field that was never asked for.
    func rejectUnknownFields() throws(ConfigurationError) {
        if let unknown = object.keys.sorted().first(where: { !seen.contains($0) }) {
            throw ConfigurationError(field(unknown), "is not a known field (check the spelling against docs/configuration.md)")
        }
    }
}
