import TwoBitsCrypto
import WireFormats

extension Fault {
    /// Reads a fault from the control API's JSON: `kind` and `count` required; `status`, `body`,
    /// `endpoint`, `delay_ms`, `apply` optional (null counts as absent). Nil on a missing or mistyped field.
    init?(json: JSONValue) {
        guard let object = json.objectValue,
              let kind = object["kind"]?.stringValue.flatMap(Kind.init(rawValue:)),
              let count = object["count"]?.intValue, let count = Int(exactly: count)
        else { return nil }
        func optional<T>(_ name: String, _ read: (JSONValue) -> T?) -> T?? {
            guard let value = object[name], value != .null else { return .some(nil) }
            guard let typed = read(value) else { return nil }
            return .some(typed)
        }
        guard let status = optional("status", { $0.intValue.flatMap { Int(exactly: $0) } }),
              let body = optional("body", \.stringValue),
              let endpoint = optional("endpoint", \.stringValue),
              let delay = optional("delay_ms", { $0.intValue.flatMap { Int(exactly: $0) } }),
              let apply = optional("apply", \.boolValue)
        else { return nil }
        self.init(kind: kind, status: status, body: body, count: count, endpoint: endpoint, delayMilliseconds: delay, apply: apply)
    }
}
