/// Bounds on what the decoder accepts, so hostile input costs at most its own size.
public struct CBORLimits: Sendable {
    /// Nesting depth of arrays and maps (the top level is depth 1).
    public var maxDepth: Int
    /// Items in one array or entries in one map.
    public var maxContainerCount: Int
    /// Bytes in one byte or text string.
    public var maxStringLength: Int

    public init(maxDepth: Int = 8, maxContainerCount: Int = 256, maxStringLength: Int = 64 * 1024) {
        self.maxDepth = maxDepth
        self.maxContainerCount = maxContainerCount
        self.maxStringLength = maxStringLength
    }

    /// Enough for attestation objects, assertions and COSE keys, with room to spare.
    public static let appAttest = CBORLimits()
}
