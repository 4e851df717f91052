/// A harness step that found nothing where a test needs a value (what `#require` says in a test).
/// TestSupport is a regular target, so it throws instead of importing Swift Testing.
public struct HarnessError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
