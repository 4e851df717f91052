public import FoundationEssentials

/// The ES256 JWT that authorises calls to Apple. A credential: never logged.
public struct DeveloperToken: Sendable, Hashable, CustomStringConvertible {
    public let jwt: String
    public let issuedAt: Date
    /// `Bearer <jwt>`, the `Authorization` value of every call, made once per token.
    public let authorization: String

    public init(jwt: String, issuedAt: Date) {
        self.jwt = jwt
        self.issuedAt = issuedAt
        authorization = "Bearer " + jwt
    }

    public var description: String { "DeveloperToken(iat: \(Int(issuedAt.timeIntervalSince1970)))" }
}
