import FoundationEssentials
import HTTPServer

/// The admin console at `/admin/`: static HTML, CSS and JavaScript embedded in the binary at build time.
/// The routes are public (nothing secret in them); the console itself calls the admin API with the key the
/// admin types, so every decision stays with the API.
struct ConsoleController: Sendable {
    /// One embedded asset: its path under `/admin/`, content type and bytes.
    struct Asset: Sendable {
        let path: String
        let contentType: String
        let bytes: [UInt8]
    }

    static let assets: [Asset] = [
        Asset(path: "/admin/", contentType: "text/html; charset=utf-8", bytes: PackageResources.index_html),
        Asset(path: "/admin/console.js", contentType: "text/javascript; charset=utf-8", bytes: PackageResources.console_js),
        Asset(path: "/admin/console.css", contentType: "text/css; charset=utf-8", bytes: PackageResources.console_css),
    ]

    /// Sent on every console response: no inline script or style, no framing, no referrer, no sniffing,
    /// nothing cached (the assets change with the binary and carry no hashed names).
    static let securityHeaders: [(String, String)] = [
        ("Content-Security-Policy",
         "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; connect-src 'self'; "
            + "object-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"),
        ("X-Frame-Options", "DENY"),
        ("Referrer-Policy", "no-referrer"),
        ("X-Content-Type-Options", "nosniff"),
        ("Cache-Control", "no-store"),
    ]

    func register(in routes: inout RouteTable) {
        // The router ignores empty segments, so `/admin`, `/admin/` and `//admin` reach the same route: the
        // raw path decides (the page must load from `/admin/` for its relative asset URLs to resolve).
        let page = Self.response(Self.assets[0])
        let entry: RouteTable.Handler = { request throws(APIError) in
            switch request.http.path {
            case "/admin/": return page
            case "/admin": return ServerResponse(status: 308, headers: [("Location", "/admin/")] + Self.securityHeaders)
            default: throw .notFound
            }
        }
        routes.add("GET", "/admin", .public, entry)
        routes.add("GET", "/admin/", .public, entry)
        for asset in Self.assets.dropFirst() {
            let response = Self.response(asset)
            routes.add("GET", asset.path, .public) { request throws(APIError) in
                guard request.http.path == asset.path else { throw .notFound }
                return response
            }
        }
    }

    private static func response(_ asset: Asset) -> ServerResponse {
        ServerResponse(status: 200, headers: [("Content-Type", asset.contentType)] + securityHeaders, body: Data(asset.bytes))
    }
}
