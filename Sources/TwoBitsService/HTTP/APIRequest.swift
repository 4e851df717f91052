import Foundation
import HTTPServer
import TwoBitsCrypto

/// A request after routing and authentication.
public struct APIRequest: Sendable {
    public let http: HTTPRequest
    /// The authenticated client (nil on public routes).
    public let client: AuthenticatedClient?
    public let requestID: String
    /// The route pattern, for logs and metrics (never the raw path, which may carry ids).
    public let route: String

    public var clientName: String { client?.name ?? "-" }

    public func parameter(_ name: String) -> String { http.parameters[name] ?? "" }

    /// The body as a JSON object.
    public func jsonBody() throws(APIError) -> RequestBody {
        let value: JSONValue
        do { value = try JSONValue.parse(http.body) } catch { throw .badRequest("the body is not valid JSON: \(error)") }
        guard case .object(let object) = value else { throw .badRequest("the body must be a JSON object") }
        return RequestBody(fields: object)
    }
}
