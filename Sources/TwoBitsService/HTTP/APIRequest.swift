import FoundationEssentials
public import HTTPServer
import TwoBitsCrypto
import WireFormats

/// A request after the pipeline's stages: what a controller sees.
public struct APIRequest: Sendable {
    public let http: ServerRequest
    /// Route, client, request id and deadline.
    public let context: RequestContext

    /// The authenticated client (nil on public routes).
    public var client: AuthenticatedClient? { context.client }
    public var requestID: String { context.requestID }
    /// The route pattern, for logs and metrics (never the raw path, which may carry ids).
    public var route: String { context.route }
    public var clientName: String { context.clientName }

    public func parameter(_ name: String) -> String { http.parameters[name] ?? "" }

    /// The body as a JSON object.
    public func jsonBody() throws(APIError) -> RequestBody {
        let value: JSONValue
        do { value = try JSONValue.parse(http.body) } catch { throw .badRequest("the body is not valid JSON: \(error)") }
        guard case .object(let object) = value else { throw .badRequest("the body must be a JSON object") }
        return RequestBody(fields: object)
    }
}
