import Ledger

extension StorageError {
    /// SQLite's own text, kept for the logs (the public answers never show it).
    init(_ error: SQLiteError) { self.init(error.description, storeFault: Self.storeFaultCodes.contains(error.code & 0xFF)) }

    /// SQLite's primary result codes that mean the file cannot take writes: READONLY, IOERR, CORRUPT,
    /// FULL, CANTOPEN, NOTADB (not a constraint, a busy lock or a misuse).
    static let storeFaultCodes: Set<Int32> = [8, 10, 11, 13, 14, 26]
}
