/// The vectors' folder is absent although `TWOBITS_REQUIRE_VECTORS=1` says the run needs it.
public struct TestVectorsMissing: Error, CustomStringConvertible {
    public let path: String
    public var description: String { "TWOBITS_REQUIRE_VECTORS=1 but \(path) is absent (set TWOBITS_VECTORS_DIR to the vectors' folder)" }
}
