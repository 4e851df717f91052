/// The ledger could not read or write.
public struct StorageError: Error, CustomStringConvertible, Sendable {
    /// What kind of failure, for the public readiness answer (the message stays in the logs).
    public enum Kind: String, Sendable {
        /// The store refused or failed the statement (disk full, read-only, corrupt, constraint…).
        case failed
        /// The database server cannot be reached (down, restarting, network).
        case unreachable
        /// No connection became free within the configured wait.
        case busy
    }

    public let message: String
    public let kind: Kind
    /// The store itself cannot take writes (full, read-only, corrupt, an I/O error), as opposed to one
    /// statement's own failure: readiness follows it (`HealthVerdictCache.realWriteFailed`).
    public let storeFault: Bool
    public init(_ message: String, kind: Kind = .failed, storeFault: Bool = false) {
        self.message = message
        self.kind = kind
        self.storeFault = storeFault
    }
    public var description: String { "storage: \(message)" }
}
