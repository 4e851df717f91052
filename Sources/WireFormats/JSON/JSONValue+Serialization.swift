public import FoundationEssentials

extension JSONValue {
    /// Compact JSON with keys sorted by their UTF-8 bytes and strings escaped as `JSONString.quote`
    /// does, so that `parse(serialized())` gives back this value. Doubles are written in Swift's
    /// shortest round-trip form, always with a `.` or an exponent (so they read back as `.double`);
    /// a non-finite double, which `parse` never produces, is written as `null`.
    public func serialized() -> String {
        var out = ""
        write(to: &out)
        return out
    }

    /// `serialized()` as UTF-8 bytes.
    public func serializedData() -> Data { Data(serialized().utf8) }

    private func write(to out: inout String) {
        switch self {
        case .null: out += "null"
        case .bool(let b): out += b ? "true" : "false"
        case .int(let i): out += String(i)
        case .double(let d): out += d.isFinite ? d.description : "null"
        case .string(let s): out += JSONString.quote(s)
        case .array(let elements):
            out += "["
            for (i, element) in elements.enumerated() {
                if i > 0 { out += "," }
                element.write(to: &out)
            }
            out += "]"
        case .object(let members):
            out += "{"
            let keys = members.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            for (i, key) in keys.enumerated() {
                if i > 0 { out += "," }
                out += JSONString.quote(key)
                out += ":"
                members[key]!.write(to: &out)
            }
            out += "}"
        }
    }
}
