/// The verdict of the readiness check: each check's verdict, answered on `/readyz` as
/// `{"ready": …, "checks": {"storage": "ok", "signing_keys": "failed: no signing key", …}}`.
public struct Readiness: Sendable, Encodable {
    public let checks: [ReadinessCheckName: ReadinessVerdict]

    public init(checks: [ReadinessCheckName: ReadinessVerdict]) { self.checks = checks }

    /// Ready when every check passed.
    public var ready: Bool { checks.values.allSatisfy(\.passed) }

    /// The checks that failed, as "name: verdict", sorted (for a log line or a service manager's status).
    public var failures: [String] { checks.filter { !$0.value.passed }.map { "\($0.key.rawValue): \($0.value)" }.sorted() }

    enum CodingKeys: String, CodingKey { case ready, checks }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(ready, forKey: .ready)
        // Keyed by the names' text: a dictionary keyed by an enum encodes as an array of pairs.
        let texts = Dictionary(uniqueKeysWithValues: checks.map { ($0.key.rawValue, $0.value.description) })
        try container.encode(texts, forKey: .checks)
    }
}
