public import WireFormats

/// Typed access to a JSON request body; every failure names the field.
public struct RequestBody: Sendable {
    public let fields: [String: JSONValue]

    public func string(_ name: String) throws(APIError) -> String {
        guard let value = fields[name], value != .null else { throw .badRequest("\(name) is required") }
        guard let s = value.stringValue else { throw .badRequest("\(name) must be a string") }
        return s
    }

    /// Absent is nil; `null` is refused like any other wrong type (docs/openapi.yaml types optional
    /// fields without null), so a client that forgot to fill a field hears about it.
    public func optionalString(_ name: String) throws(APIError) -> String? {
        guard let value = fields[name] else { return nil }
        guard let s = value.stringValue else { throw .badRequest("\(name) must be a string") }
        return s
    }

    public func optionalBool(_ name: String) throws(APIError) -> Bool? {
        guard let value = fields[name] else { return nil }
        guard let b = value.boolValue else { throw .badRequest("\(name) must be true or false") }
        return b
    }

    /// Refuses fields the route does not know, so a typo is an error rather than silently ignored.
    public func allowOnly(_ names: Set<String>) throws(APIError) {
        if let unknown = fields.keys.sorted().first(where: { !names.contains($0) }) {
            throw .badRequest("unknown field \(unknown); allowed: \(names.sorted().joined(separator: ", "))")
        }
    }
}
