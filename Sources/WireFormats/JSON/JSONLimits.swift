/// Bounds on what `JSONValue.parse` accepts, so that hostile input costs little and fails early.
public struct JSONLimits: Sendable, Equatable {
    /// The most arrays and objects open at once (`[[1]]` has depth 2; a scalar has depth 0).
    public var maxDepth: Int
    /// The most values in the document, containers and scalars alike (`[1,2]` has 3).
    public var maxValues: Int

    /// `maxDepth` is capped at 512: the parser recurses once per level.
    public init(maxDepth: Int, maxValues: Int) {
        self.maxDepth = min(max(maxDepth, 0), 512)
        self.maxValues = max(maxValues, 1)
    }

    /// Request bodies, Apple's answers, JWS parts: small flat objects. Depth 32, 4,096 values.
    public static let `default` = JSONLimits(maxDepth: 32, maxValues: 4_096)

    /// The configuration file, written by an operator: more clients and promotions, same nesting.
    public static let configuration = JSONLimits(maxDepth: 32, maxValues: 100_000)
}
