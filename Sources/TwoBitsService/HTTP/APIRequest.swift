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
        guard let value = JSONValue.parse(http.body) else { throw .badRequest("the body is not valid JSON") }
        guard case .object(let object) = value else { throw .badRequest("the body must be a JSON object") }
        return RequestBody(fields: object)
    }
}

/// Typed access to a JSON request body; every failure names the field.
public struct RequestBody: Sendable {
    public let fields: [String: JSONValue]

    public func string(_ name: String) throws(APIError) -> String {
        guard let value = fields[name], value != .null else { throw .badRequest("\(name) is required") }
        guard let s = value.stringValue else { throw .badRequest("\(name) must be a string") }
        return s
    }

    public func optionalString(_ name: String) throws(APIError) -> String? {
        guard let value = fields[name], value != .null else { return nil }
        guard let s = value.stringValue else { throw .badRequest("\(name) must be a string") }
        return s
    }

    public func optionalBool(_ name: String) throws(APIError) -> Bool? {
        guard let value = fields[name], value != .null else { return nil }
        guard let b = value.boolValue else { throw .badRequest("\(name) must be true or false") }
        return b
    }

    /// Refuses fields the route does not know, so a typo is an error rather than silently ignored.
    public func allowOnly(_ names: Set<String>) throws(APIError) {
        if let unknown = fields.keys.sorted().first(where: { !names.contains($0) }) {
            throw .badRequest("unknown field \(unknown); allowed: \(names.sorted().joined(separator: ", "))")
        }
    }
}
