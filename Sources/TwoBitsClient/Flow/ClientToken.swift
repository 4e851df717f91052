#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
public import WireVocabulary

/// A token to send to the main API, with what the app needs to know about it.
public struct ClientToken: Sendable, Equatable {
    /// The ES256 JWS; send it as the main API asks (e.g. `Authorization: Bearer …`).
    public let value: String
    /// The authority the token carries (`appattest`, `devicecheck` or `debug`), as its `tier` claim names it.
    public let tier: TokenTier
    /// When it expires, by this device's clock (from the server's relative `expires_in`).
    public let expiresAt: Date
    public let limitedUse: Bool
    /// Why the strong tier was not used; nil for `appattest` tokens.
    public let appAttestStatus: AppAttestStatus?
}
