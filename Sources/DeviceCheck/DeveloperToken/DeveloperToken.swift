public import FoundationEssentials

/// The ES256 JWT that authorises calls to Apple. A credential: never logged.
public struct DeveloperToken: Sendable, Hashable, CustomStringConvertible {
    public let jwt: String
    public let issuedAt: Date

    public init(jwt: String, issuedAt: Date) {
        self.jwt = jwt
        self.issuedAt = issuedAt
    }

    public var description: String { "DeveloperToken(iat: \(Int(issuedAt.timeIntervalSince1970)))" }
}
