public import HTTPServer

/// Who may call a route.
public enum RouteAccess: Sendable, Equatable {
    /// No API key needed (health, metrics, JWKS).
    case `public`
    /// Any configured client.
    case anyClient
    /// Clients holding this role.
    case role(ClientRole)
}

/// The routes being registered by each controller at startup.
public struct RouteTable: Sendable {
    public typealias Handler = @Sendable (APIRequest) async throws(APIError) -> ServerResponse

    struct Entry: Sendable {
        let access: RouteAccess
        let handler: Handler
    }

    var router = Router<Entry>()

    public init() {}

    public mutating func add(_ method: String, _ pattern: String, _ access: RouteAccess, _ handler: @escaping Handler) {
        router.add(method, pattern, Entry(access: access, handler: handler))
    }

    /// Every registered (method, pattern) pair, for the OpenAPI sync test.
    public var routes: [(method: String, pattern: String)] { router.routes.map { ($0.method, $0.pattern) } }
}
