public import Ledger
public import Policy

/// Why no token was issued.
public enum ExchangeError: Error, Sendable {
    /// A debug secret was shown while `apple.environment` is not development.
    case debugDisabled
    /// The debug secret is unknown or was deleted.
    case invalidDebugSecret
    /// This device token was exchanged within the reuse window; the app must generate a fresh one.
    case deviceTokenReused
    /// Admitting the device failed: banned, a token Apple refuses, or Apple or the ledger unavailable.
    case refused(PolicyError)
    /// The ledger failed before the credential was judged.
    case storage(StorageError)
}
