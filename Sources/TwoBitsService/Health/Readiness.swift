/// The verdict of the readiness check: each check's "ok" or "failed: why".
public struct Readiness: Sendable, Encodable {
    public let checks: [String: String]

    /// Ready when every check says "ok".
    public var ready: Bool { checks.values.allSatisfy { $0 == "ok" } }

    /// The checks that failed, as "name: why", sorted (for a log line or a service manager's status).
    public var failures: [String] { checks.filter { $0.value != "ok" }.map { "\($0.key): \($0.value)" }.sorted() }

    enum CodingKeys: String, CodingKey { case ready, checks }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(ready, forKey: .ready)
        try container.encode(checks, forKey: .checks)
    }
}
