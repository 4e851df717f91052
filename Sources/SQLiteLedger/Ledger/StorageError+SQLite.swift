import Ledger

extension StorageError {
    /// SQLite's own text, kept for the logs (the public answers never show it).
    init(_ error: SQLiteError) { self.init(error.description) }
}
