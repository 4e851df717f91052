/// A configuration problem: which field, and how to fix it. The process exits before it listens.
public struct ConfigurationError: Error, CustomStringConvertible, Sendable {
    public let field: String
    public let problem: String

    public init(_ field: String, _ problem: String) {
        self.field = field
        self.problem = problem
    }

    /// The field and the problem, any password in them hidden (a connection string may be quoted back).
    public var description: String { CredentialRedaction.redacted(field.isEmpty ? problem : "\(field): \(problem)") }
}
