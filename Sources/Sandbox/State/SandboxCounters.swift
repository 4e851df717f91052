/// What the sandbox has seen, for tests and benchmarks.
public struct SandboxCounters: Sendable, Equatable, Codable {
    /// Calls per endpoint name.
    public var calls: [String: Int] = [:]
    /// Distinct developer JWTs that passed verification.
    public var distinctDeveloperTokens = 0
    /// Update bodies that left out `bit0` or `bit1`.
    public var updatesMissingBit = 0
    /// Answers per status code.
    public var statuses: [String: Int] = [:]
    /// The most calls to Apple's endpoints the sandbox was serving at one moment.
    public var maxConcurrentCalls = 0

    public init() {}

    enum CodingKeys: String, CodingKey {
        case calls
        case distinctDeveloperTokens = "distinct_developer_tokens"
        case updatesMissingBit = "updates_missing_bit"
        case statuses
        case maxConcurrentCalls = "max_concurrent_calls"
    }
}
