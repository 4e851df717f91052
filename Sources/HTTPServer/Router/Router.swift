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

    @usableFromInline
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
    /// Each route's segments and method, beside `routes`: matching reads these plain arrays and copies a
    /// (generic) `Route` only for the one it returns.
    @usableFromInline var shapes: [[Segment]] = []
    @usableFromInline var methods: [String] = []

    public init() {}

    /// Registers a handler. Patterns are literal segments and `{name}` parameters.
    public mutating func add(_ method: String, _ pattern: String, _ handler: Handler) {
        let segments = Self.split(pattern).map { s -> Segment in
            s.hasPrefix("{") && s.hasSuffix("}") ? .parameter(String(s.dropFirst().dropLast())) : .literal(s)
        }
        routes.append(Route(method: method, pattern: pattern, segments: segments, handler: handler))
        shapes.append(segments)
        methods.append(method)
    }

    /// Inlinable, so each caller's module specializes it for its handler type: unspecialized, every
    /// request looked up the generic metadata of `Route` and `Match` at run time.
    @inlinable
    public func match(method: String, path: String) -> Match {
        // Views into the path: a segment becomes a String only when it fills a parameter. Empty segments
        // are kept, never collapsed: `//v1/admin/audit` is not `/v1/admin/audit`, or a proxy's rule on the
        // prefix `/v1/admin/` would be walked around.
        guard path.utf8.first == UInt8(ascii: "/") else { return .notFound }
        let parts = path.dropFirst().split(separator: "/", omittingEmptySubsequences: false)
        var allowed: [String] = []
        for index in shapes.indices where Self.fits(shapes[index], parts) {
            if methods[index] == method { return .found(routes[index], parameters: Self.parameters(shapes[index], parts)) }
            allowed.append(methods[index])
        }
        return allowed.isEmpty ? .notFound : .methodNotAllowed(allowed: allowed)
    }

    /// A pattern's segments after its leading `/`; `/admin/` ends with an empty literal, so it matches
    /// `/admin/` only.
    private static func split(_ path: String) -> [String] {
        path.dropFirst().split(separator: "/", omittingEmptySubsequences: false).map(String.init)
    }

    /// Whether the path's segments fit a route's: same count, literals equal byte for byte. Runs for
    /// every route on every request, so it compares UTF-8 views with plain index loops.
    @inlinable
    static func fits(_ segments: [Segment], _ parts: [Substring]) -> Bool {
        guard segments.count == parts.count else { return false }
        for i in segments.indices {
            switch segments[i] {
            case .literal(let literal): if !literal.utf8.elementsEqual(parts[i].utf8) { return false }
            case .parameter: if parts[i].isEmpty { return false } // `/v1/promotions//claim` names no promotion
            }
        }
        return true
    }

    @inlinable
    static func parameters(_ segments: [Segment], _ parts: [Substring]) -> [String: String] {
        var parameters: [String: String] = [:]
        for i in segments.indices {
            if case .parameter(let name) = segments[i] { parameters[name] = String(parts[i]) }
        }
        return parameters
    }
}
