public import Ledger

/// Why a debug secret was not created or deleted.
public enum DebugSecretError: Error, Sendable {
    /// The name is not 1-64 characters of A-Z a-z 0-9 . _ -
    case invalidName
    /// The ledger holds `limit` secrets already.
    case tooMany(limit: Int)
    /// A secret of this name exists.
    case exists(name: String)
    case notFound(name: String)
    case storage(StorageError)
}
