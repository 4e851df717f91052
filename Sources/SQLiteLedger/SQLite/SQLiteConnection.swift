import CSQLite
import CSQLiteShims
import FoundationEssentials
import Locking
import Glibc

/// One SQLite connection in WAL mode, serialised by a lock.
///
/// Statements are short (single-row reads and writes on indexed keys), so holding the lock for
/// the duration of a statement costs microseconds; no call blocks on I/O for long in WAL mode.
// Unchecked: `handle` and the statement cache are used only while holding `lock`.
public final class SQLiteConnection: @unchecked Sendable {
    private let handle: OpaquePointer
    /// Serialises every use of `handle` (so SQLite's own per-call mutex is not needed: `SQLITE_OPEN_NOMUTEX`).
    let lock = Lock(())
    /// Prepared statements by SQL text, reused (reset) instead of compiled on every call. Guarded by `lock`.
    private var statements: [String: OpaquePointer] = [:]
    public let path: String
    /// Device and inode of the file opened, to notice when the path names another file (or none).
    private let identity: FileIdentity?
    /// The closure `sqlite3_wal_hook` calls after each commit, retained here (SQLite holds a bare pointer).
    private var walHook: Unmanaged<WALHook>?

    /// Opens (creating if needed, mode 0600) the database file, in WAL mode with a busy timeout.
    /// SQLite creates the `-wal` and `-shm` files with the mode of the database file.
    public init(path: String) throws(SQLiteError) {
        if !Self.isMemory(path) {
            // The ledger holds the audit trail, idempotency answers and pending orders: only the service's user reads it.
            let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
            if fd >= 0 { close(fd) }
        }
        var db: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        let rc = sqlite3_open_v2(path, &db, flags, nil)
        guard rc == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open"
            if let db { sqlite3_close(db) }
            throw SQLiteError(code: rc, message: "\(path): \(message)")
        }
        handle = db
        self.path = path
        identity = Self.isMemory(path) ? nil : FileIdentity(path: path)
        sqlite3_busy_timeout(db, 5_000)
        try execute("PRAGMA journal_mode=WAL")
        // NORMAL in WAL mode survives a process crash (SIGKILL); only an OS crash can lose the last commits.
        try execute("PRAGMA synchronous=NORMAL")
        try execute("PRAGMA foreign_keys=ON")
    }

    deinit {
        for statement in statements.values { sqlite3_finalize(statement) }
        sqlite3_close_v2(handle)
        walHook?.release()
    }

    /// Replaces SQLite's automatic checkpoints (run inline by the committing writer, fsync included)
    /// with `body`, called after each commit with the number of pages in the write-ahead log. Once, at setup.
    public func onWALCommit(_ body: @escaping @Sendable (Int) -> Void) throws(SQLiteError) {
        try execute("PRAGMA wal_autocheckpoint=0")
        lock.withLock {
            let hook = Unmanaged.passRetained(WALHook(body))
            walHook?.release()
            walHook = hook
            sqlite3_wal_hook(handle, { context, _, _, pages in
                if let context { Unmanaged<WALHook>.fromOpaque(context).takeUnretainedValue().body(Int(pages)) }
                return SQLITE_OK
            }, hook.toOpaque())
        }
    }

    /// A PASSIVE checkpoint: copies what it can of the write-ahead log into the database file without
    /// waiting for (or blocking) readers and the writer. Returns the log's size and how much of it is
    /// now in the database, in pages.
    @discardableResult
    public func checkpoint() throws(SQLiteError) -> (logPages: Int, checkpointedPages: Int) {
        try lock.withLock { () throws(SQLiteError) in
            var log: Int32 = 0
            var done: Int32 = 0
            let rc = sqlite3_wal_checkpoint_v2(handle, nil, SQLITE_CHECKPOINT_PASSIVE, &log, &done)
            guard rc == SQLITE_OK else { throw currentError() }
            return (Int(log), Int(done))
        }
    }

    static func isMemory(_ path: String) -> Bool { path.isEmpty || path == ":memory:" || path.hasPrefix("file:") }

    /// Fails when the file at `path` is no longer the file this connection holds (deleted, or replaced
    /// by a rename): writes would go into a file nobody will ever open again.
    public func verifyFileIdentity() throws(SQLiteError) {
        guard let identity else { return }
        guard FileIdentity(path: path) == identity else {
            throw SQLiteError(code: SQLITE_IOERR, message: "the database file \(path) was deleted or replaced since it was opened")
        }
    }

    /// Runs statements that return no rows.
    public func execute(_ sql: String) throws(SQLiteError) {
        try lock.withLock { () throws(SQLiteError) in
            try verifyFileIdentity()
            var error: UnsafeMutablePointer<CChar>?
            let rc = sqlite3_exec(handle, sql, nil, nil, &error)
            if rc != SQLITE_OK {
                let message = error.map { String(cString: $0) } ?? String(cString: sqlite3_errmsg(handle))
                sqlite3_free(error)
                throw SQLiteError(code: rc, message: message)
            }
        }
    }

    /// Runs one statement with bound values and returns its rows.
    @discardableResult
    public func query(_ sql: String, _ values: [SQLiteValue] = []) throws(SQLiteError) -> [SQLiteRow] {
        try lock.withLock { () throws(SQLiteError) in
            try verifyFileIdentity()
            return try run(sql, values)
        }
    }

    /// Runs `body` inside one transaction (BEGIN IMMEDIATE … COMMIT), rolling back on error.
    public func transaction<T>(_ body: (SQLiteTransaction) throws(SQLiteError) -> T) throws(SQLiteError) -> T {
        try lock.withLock { () throws(SQLiteError) -> T in try transactionLocked(body) }
    }

    /// `transaction` with the lock already held.
    func transactionLocked<T>(_ body: (SQLiteTransaction) throws(SQLiteError) -> T) throws(SQLiteError) -> T {
        try verifyFileIdentity()
        try run("BEGIN IMMEDIATE", [])
        do throws(SQLiteError) {
            let value = try body(SQLiteTransaction(connection: self))
            try run("COMMIT", [])
            return value
        } catch {
            _ = try? run("ROLLBACK", [])
            throw error
        }
    }

    /// Executes with the lock already held.
    @discardableResult
    func run(_ sql: String, _ values: [SQLiteValue]) throws(SQLiteError) -> [SQLiteRow] {
        let stmt: OpaquePointer
        if let cached = statements[sql] {
            stmt = cached
        } else {
            var prepared: OpaquePointer?
            guard sqlite3_prepare_v2(handle, sql, -1, &prepared, nil) == SQLITE_OK, let prepared else { throw currentError() }
            // Schema statements and one-offs are few; cache everything, bounded in practice by the code's SQL.
            statements[sql] = prepared
            stmt = prepared
        }
        do throws(SQLiteError) {
            return try withBindings(stmt, values, from: 0) { () throws(SQLiteError) -> [SQLiteRow] in
                // Before the bytes are given back: SQLite reads a bound value until then.
                defer {
                    sqlite3_reset(stmt)
                    sqlite3_clear_bindings(stmt)
                }
                return try steps(stmt)
            }
        } catch {
            // Above all when a bind failed and `body` never ran: the values bound before it point at bytes no
            // longer lent. Clearing them does not read them, and the cached statement starts clean next time.
            sqlite3_reset(stmt)
            sqlite3_clear_bindings(stmt)
            throw error
        }
    }

    /// Steps a bound statement to its end and reads its rows.
    private func steps(_ stmt: OpaquePointer) throws(SQLiteError) -> [SQLiteRow] {
        var rows: [SQLiteRow] = []
        while true {
            let rc = sqlite3_step(stmt)
            if rc == SQLITE_DONE { break }
            guard rc == SQLITE_ROW else { throw currentError() }
            var row = SQLiteRow()
            for column in 0..<sqlite3_column_count(stmt) {
                let name = String(cString: sqlite3_column_name(stmt, column))
                switch sqlite3_column_type(stmt, column) {
                case SQLITE_INTEGER: row.values[name] = .integer(sqlite3_column_int64(stmt, column))
                case SQLITE_FLOAT: row.values[name] = .real(sqlite3_column_double(stmt, column))
                case SQLITE_TEXT: row.values[name] = .text(String(cString: sqlite3_column_text(stmt, column)))
                case SQLITE_BLOB:
                    let count = Int(sqlite3_column_bytes(stmt, column))
                    row.values[name] = .blob(count == 0 ? Data() : Data(bytes: sqlite3_column_blob(stmt, column), count: count))
                default: row.values[name] = .null
                }
            }
            rows.append(row)
        }
        return rows
    }

    /// Binds `values[index...]` and runs `body` while every text and blob is still lent to SQLite, uncopied
    /// (SQLITE_STATIC): `body` steps the statement and resets it. A copy per bound string (SQLITE_TRANSIENT)
    /// was a `malloc` and a `free` each, about 15 per claim.
    private func withBindings<T>(_ stmt: OpaquePointer, _ values: [SQLiteValue], from index: Int,
                                 _ body: () throws(SQLiteError) -> T) throws(SQLiteError) -> T {
        guard index < values.count else { return try body() }
        let position = Int32(index + 1)
        func rest() throws(SQLiteError) -> T { try withBindings(stmt, values, from: index + 1, body) }
        let rc: Int32
        switch values[index] {
        case .null: rc = sqlite3_bind_null(stmt, position)
        case .integer(let v): rc = sqlite3_bind_int64(stmt, position, v)
        case .real(let v): rc = sqlite3_bind_double(stmt, position, v)
        // withCString lends the string's own bytes (a C-string argument would copy them into an array first).
        case .text(let v):
            return try v.withCString { text -> Result<T, SQLiteError> in
                let rc = twobits_sqlite_bind_text_lent(stmt, position, text, -1)
                guard rc == SQLITE_OK else { return .failure(currentError()) }
                return Result(catching: rest)
            }.get()
        case .blob(let v):
            return try v.withUnsafeBytes { bytes -> Result<T, SQLiteError> in
                let rc = twobits_sqlite_bind_blob_lent(stmt, position, bytes.baseAddress, Int32(bytes.count))
                guard rc == SQLITE_OK else { return .failure(currentError()) }
                return Result(catching: rest)
            }.get()
        }
        guard rc == SQLITE_OK else { throw currentError() }
        return try rest()
    }

    /// Rows changed by the last statement on this connection.
    var changes: Int { Int(sqlite3_changes(handle)) }

    /// The rowid of the last row inserted on this connection.
    var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(handle) }

    /// Runs one statement and returns how many rows it changed (both under the lock). Preferred to
    /// `RETURNING`, which SQLite runs through a temporary table on every execution.
    public func change(_ sql: String, _ values: [SQLiteValue] = []) throws(SQLiteError) -> Int {
        try lock.withLock { () throws(SQLiteError) -> Int in
            try verifyFileIdentity()
            try run(sql, values)
            return changes
        }
    }

    private func currentError() -> SQLiteError {
        SQLiteError(code: sqlite3_errcode(handle), message: String(cString: sqlite3_errmsg(handle)))
    }
}

/// The boxed closure behind `sqlite3_wal_hook`'s context pointer.
private final class WALHook {
    let body: @Sendable (Int) -> Void
    init(_ body: @escaping @Sendable (Int) -> Void) { self.body = body }
}
