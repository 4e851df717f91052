#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A token to send to the main API, with what the app needs to know about it.
public struct ClientToken: Sendable, Equatable {
    /// The ES256 JWS; send it as the main API asks (e.g. `Authorization: Bearer …`).
    public let value: String
    /// `appattest`, `devicecheck` or `debug`.
    public let tier: String
    /// When it expires, by this device's clock (from the server's relative `expires_in`).
    public let expiresAt: Date
    public let limitedUse: Bool
    /// Why the strong tier was not used; nil for `appattest` tokens.
    public let appAttestStatus: AppAttestStatus?
}
