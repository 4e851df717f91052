import Foundation
import HTTPServer
import TwoBitsCrypto

/// The request pipeline: request id, routing, authentication, roles, media type, handler, error
/// envelope, then one log line and the request metrics.
struct APIRouter: Sendable {
    let table: RouteTable
    let authenticator: ClientAuthenticator
    let metrics: MetricsRegistry
    let logger: Logger
    let limits: AppleCallLimits

    func handle(_ http: HTTPRequest) async -> HTTPResponse {
        let requestID = Self.requestID(from: http)
        var route = "unmatched"
        var client: AuthenticatedClient?
        var response: HTTPResponse
        do throws(APIError) {
            switch table.router.match(method: http.method, path: http.path) {
            case .notFound: throw .notFound
            case .methodNotAllowed(let allowed): throw .methodNotAllowed(allowed)
            case .found(let match, let parameters):
                route = match.pattern
                client = try authorize(http, access: match.handler.access)
                try limits.admit(client, route: match.pattern)
                if ["POST", "PUT", "PATCH"].contains(http.method), !http.body.isEmpty {
                    let type = http.header("Content-Type")?.lowercased() ?? ""
                    guard type.hasPrefix("application/json") else { throw .unsupportedMediaType }
                }
                var routed = http
                routed.parameters = parameters
                let request = APIRequest(http: routed, client: client, requestID: requestID, route: match.pattern)
                response = try await match.handler.handler(request)
            }
        } catch {
            response = error.response
            if let detail = error.logDetail {
                logger.log(.error, "request failed", ["request_id": .string(requestID), "route": .string(route), "code": .string(error.code), "detail": .string(detail)])
            }
            if error.status == 502 {
                logger.log(.error, "Apple rejected this service's credentials: check apple.team_id, apple.key_id, apple.private_key_file and apple.environment (a device token from a build of the other environment gets the same answer: Xcode builds are development)",
                           ["request_id": .string(requestID), "route": .string(route)])
            }
        }
        if response.status == 405, case .methodNotAllowed(let allowed) = table.router.match(method: http.method, path: http.path) {
            response.headers.append(("Allow", allowed.joined(separator: ", ")))
        }
        response.headers.append(("X-Request-Id", requestID))
        response.annotations = ["route": route, "client": client?.name ?? "-", "request_id": requestID]
        return response
    }

    /// Decides from the request line and headers alone, before any body byte is read: route (404/405),
    /// authentication and role (401/403), media type (415). nil lets the request through; `handle`
    /// checks the same again on the complete request.
    func checkHead(_ http: HTTPRequest) -> HTTPResponse? {
        var route = "unmatched"
        do throws(APIError) {
            switch table.router.match(method: http.method, path: http.path) {
            case .notFound: throw .notFound
            case .methodNotAllowed(let allowed): throw .methodNotAllowed(allowed)
            case .found(let match, _):
                route = match.pattern
                _ = try authorize(http, access: match.handler.access)
                let declaresBody = (Int(http.header("Content-Length") ?? "") ?? 0) > 0 || http.header("Transfer-Encoding") != nil
                if ["POST", "PUT", "PATCH"].contains(http.method), declaresBody {
                    let type = http.header("Content-Type")?.lowercased() ?? ""
                    guard type.hasPrefix("application/json") else { throw .unsupportedMediaType }
                }
                return nil
            }
        } catch {
            var response = error.response
            if case .methodNotAllowed(let allowed) = table.router.match(method: http.method, path: http.path) {
                response.headers.append(("Allow", allowed.joined(separator: ", ")))
            }
            let requestID = Self.requestID(from: http)
            response.headers.append(("X-Request-Id", requestID))
            response.annotations = ["route": route, "client": "-", "request_id": requestID]
            return response
        }
    }

    private func authorize(_ http: HTTPRequest, access: RouteAccess) throws(APIError) -> AuthenticatedClient? {
        if access == .public { return nil }
        guard let client = authenticator.authenticate(http.header("Authorization")) else { throw .unauthorized }
        if case .role(let role) = access, !client.roles.contains(role) {
            throw .forbidden("this route needs the \(role.rawValue) role; client \(client.name) has \(client.roles.map(\.rawValue).sorted().joined(separator: ", "))")
        }
        return client
    }

    /// One log line and the request counter, for the answer the client actually got.
    func record(_ http: HTTPRequest, _ response: HTTPResponse, elapsed: Duration) {
        let route = response.annotations["route"] ?? "unrouted"
        let milliseconds = Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
        metrics.increment("twobits_http_requests_total", "HTTP requests by route and status",
                          labels: [("route", route), ("status", String(response.status))])
        logger.log(response.status >= 500 ? .error : .info, "request", [
            "method": .string(http.method), "route": .string(route), "status": .int(response.status),
            "duration_ms": .double((milliseconds * 1000).rounded() / 1000),
            "request_id": .string(response.annotations["request_id"] ?? response.header("X-Request-Id") ?? "-"),
            "client": .string(response.annotations["client"] ?? "-"),
        ])
    }

    /// Echoes a well-formed `X-Request-Id`, otherwise makes one.
    static func requestID(from http: HTTPRequest) -> String {
        if let given = http.header("X-Request-Id"), (1...128).contains(given.utf8.count),
           given.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A) || $0 == 0x2D || $0 == 0x2E || $0 == 0x5F }) {
            return given
        }
        return SecureRandom.bytes(12).hexString
    }
}
