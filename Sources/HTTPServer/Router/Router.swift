/// Matches a method and path against registered patterns such as `/v1/promotions/{id}/claim`.
///
/// Generic over what a route carries, so the service and the sandbox each keep their own handler type.
public struct Router<Handler: Sendable>: Sendable {
    public struct Route: Sendable {
        public let method: String
        public let pattern: String
        let segments: [Segment]
        public let handler: Handler
    }

    enum Segment: Sendable, Equatable {
        case literal(String)
        case parameter(String)
    }

    /// The outcome of matching a request.
    public enum Match {
        case found(Route, parameters: [String: String])
        /// The path exists with other methods.
        case methodNotAllowed(allowed: [String])
        case notFound
    }

    public private(set) var routes: [Route] = []

    public init() {}

    /// Registers a handler. Patterns are literal segments and `{name}` parameters.
    public mutating func add(_ method: String, _ pattern: String, _ handler: Handler) {
        let segments = Self.split(pattern).map { s -> Segment in
            s.hasPrefix("{") && s.hasSuffix("}") ? .parameter(String(s.dropFirst().dropLast())) : .literal(s)
        }
        routes.append(Route(method: method, pattern: pattern, segments: segments, handler: handler))
    }

    public func match(method: String, path: String) -> Match {
        // Views into the path: a segment becomes a String only when it fills a parameter.
        let parts = path.split(separator: "/", omittingEmptySubsequences: true)
        var allowed: [String] = []
        for route in routes where Self.fits(route.segments, parts) {
            if route.method == method { return .found(route, parameters: Self.parameters(route.segments, parts)) }
            allowed.append(route.method)
        }
        return allowed.isEmpty ? .notFound : .methodNotAllowed(allowed: allowed)
    }

    private static func split(_ path: String) -> [String] {
        path.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
    }

    private static func fits(_ segments: [Segment], _ parts: [Substring]) -> Bool {
        guard segments.count == parts.count else { return false }
        for (segment, part) in zip(segments, parts) {
            if case .literal(let literal) = segment, literal != part { return false }
        }
        return true
    }

    private static func parameters(_ segments: [Segment], _ parts: [Substring]) -> [String: String] {
        var parameters: [String: String] = [:]
        for (segment, part) in zip(segments, parts) {
            if case .parameter(let name) = segment { parameters[name] = String(part) }
        }
        return parameters
    }
}
