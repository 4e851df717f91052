/// The ledger could not read or write.
public struct StorageError: Error, CustomStringConvertible, Sendable {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { "storage: \(message)" }
}
