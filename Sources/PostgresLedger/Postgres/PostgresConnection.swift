import CPostgres
import FoundationEssentials
import Glibc

/// One blocking libpq connection. Not thread-safe: the pool gives each connection a thread of its own.
///
/// The URI goes to libpq as it is (`PQconnectdbParams` with `expand_dbname`), so libpq's own environment
/// variables (PGHOST, PGPASSWORD, PGSSLMODE…) and the URI's `sslmode` keep working. Defaults for a
/// connect timeout, TCP keepalives and the application name come first, so the URI overrides them.
// Unchecked: libpq's handle is used by one thread at a time, the pool worker (or the caller, before the pool) that owns it.
final class PostgresConnection: @unchecked Sendable {
    private let handle: OpaquePointer
    /// Statements prepared on this session, by their text: the server parses and plans each once per
    /// connection instead of at every call (PostgreSQL's own CPU per ledger call is most of its cost).
    private var prepared: [String: String] = [:]

    /// Connects, or fails with libpq's message (never the URI: libpq's text holds host and port, not the password).
    init(uri: String) throws(PostgresError) {
        try Self.checkParses(uri)
        var pairs: [(String, String)] = []
        let env = ProcessInfo.processInfo.environment
        if env["PGCONNECT_TIMEOUT"] == nil { pairs.append(("connect_timeout", "5")) }
        if env["PGAPPNAME"] == nil { pairs.append(("application_name", "twobits")) }
        // A server that vanishes without closing the socket is noticed in about 30 s instead of hours.
        pairs += [("keepalives", "1"), ("keepalives_idle", "10"), ("keepalives_interval", "5"), ("keepalives_count", "3")]
        // Keepalives only probe an idle socket: a query sent to a server cut off by the network (a fenced primary)
        // waits for TCP's retransmissions, about 15 minutes, and the pool's connections with it. TCP_USER_TIMEOUT
        // bounds unacknowledged data too (the fault campaign's failover, docs/testing.md).
        pairs.append(("tcp_user_timeout", "10000"))
        pairs.append(("dbname", uri))
        let keys = pairs.map { strdup($0.0) }
        let values = pairs.map { strdup($0.1) }
        defer {
            keys.forEach { free($0) }
            values.forEach { free($0) }
        }
        var keyPointers: [UnsafePointer<CChar>?] = keys.map { UnsafePointer($0) } + [nil]
        var valuePointers: [UnsafePointer<CChar>?] = values.map { UnsafePointer($0) } + [nil]
        guard let conn = PQconnectdbParams(&keyPointers, &valuePointers, 1) else {
            throw PostgresError(sqlState: nil, message: "out of memory", connectionLost: true)
        }
        guard PQstatus(conn) == CONNECTION_OK else {
            let message = Self.trimmed(PQerrorMessage(conn))
            PQfinish(conn)
            throw PostgresError(sqlState: nil, message: message, connectionLost: true)
        }
        // Notices ("relation … already exists, skipping") would go to stderr: the ledger has nothing to say there.
        PQsetNoticeProcessor(conn, { _, _ in }, nil)
        handle = conn
    }

    deinit { PQfinish(handle) }

    var isHealthy: Bool { PQstatus(handle) == CONNECTION_OK }

    /// Whether the idle connection may take a job: nothing may have arrived while it sat idle (a poll that does
    /// not wait). A server ending the session (shutdown, restart, `pg_terminate_backend`) sends its FATAL and
    /// closes; reading that FATAL alone would leave libpq's status at OK, and the job would go into a dead
    /// socket. The ledger sends no LISTEN and no asynchronous request, so anything readable means that.
    var isAlive: Bool {
        guard PQstatus(handle) == CONNECTION_OK else { return false }
        var descriptor = pollfd(fd: PQsocket(handle), events: Int16(POLLIN), revents: 0)
        return poll(&descriptor, 1, 0) == 0
    }

    /// The server's process id for this session (which advisory locks in `pg_locks` belong to).
    var backendPID: Int32 { PQbackendPID(handle) }

    /// Runs one or more statements without parameters (simple query protocol); the last result is returned.
    @discardableResult
    func execute(_ sql: String) throws(PostgresError) -> [PostgresRow] {
        try consume(PQexec(handle, sql))
    }

    /// Runs one statement with parameters: integers and text as text, bytea as binary.
    @discardableResult
    func query(_ sql: String, _ parameters: [PostgresValue] = []) throws(PostgresError) -> [PostgresRow] {
        if parameters.isEmpty { return try consume(PQexecParams(handle, sql, 0, nil, nil, nil, nil, 0)) }
        let bound = BoundParameters(parameters)
        let name = try prepare(sql, types: bound.types)
        do { return try consume(bound.withValues { PQexecPrepared(handle, name, bound.count, $0, bound.lengths, bound.formats, 0) }) }
        catch where error.sqlState == "0A000" {
            // "cached plan must not change result type": a migration (from another replica) changed a table
            // under a prepared `SELECT *`. Forget every prepared statement and run this one afresh.
            forgetPrepared()
            let again = try prepare(sql, types: bound.types)
            return try consume(bound.withValues { PQexecPrepared(handle, again, bound.count, $0, bound.lengths, bound.formats, 0) })
        }
    }

    /// Runs several independent statements in one round trip (libpq's pipeline mode) and one transaction,
    /// with the outcome of each as if it had been sent alone:
    /// - all succeed: one commit for all of them (one WAL flush where commits are synchronous, instead of one
    ///   per statement in turn);
    /// - one fails: the server rolls the transaction back and each statement runs again alone, so one
    ///   request's failure (or a stale prepared plan, or a deadlock with another replica's batch) never
    ///   decides another's outcome;
    /// - the connection breaks: every statement fails with `connectionLost`, as a lone statement would.
    /// What the batch saves is the server's wake-up, read, reply and commit per statement (about half its CPU
    /// for the ledger's one-row statements) and the caller's wait per round trip.
    func pipeline(_ statements: [PostgresStatement]) -> [Result<[PostgresRow], PostgresError>] {
        if statements.count > 1 {
            switch together(statements) {
            case .committed(let rows): return rows.map { .success($0) }
            case .broken: return statements.map { _ in .failure(lostError()) }
            case .rolledBack: break
            }
        }
        return statements.map { statement in
            do throws(PostgresError) { return .success(try query(statement.sql, statement.parameters)) } catch { return .failure(error) }
        }
    }

    private enum BatchOutcome {
        case committed([[PostgresRow]])
        /// A statement failed (or could not be prepared): nothing of the batch was committed.
        case rolledBack
        /// The connection broke, or the server's answers did not follow the protocol.
        case broken
    }

    /// Sends `statements` in one pipeline closed by one Sync: the server runs them as one implicit transaction.
    private func together(_ statements: [PostgresStatement]) -> BatchOutcome {
        var ready: [(name: String, bound: BoundParameters)] = []
        for statement in statements {
            let bound = BoundParameters(statement.parameters)
            do { ready.append((try prepare(statement.sql, types: bound.types), bound)) } catch { return isHealthy ? .rolledBack : .broken }
        }
        guard PQenterPipelineMode(handle) == 1 else { return .broken }
        defer { _ = PQexitPipelineMode(handle) }
        for item in ready {
            let queued = item.bound.withValues { PQsendQueryPrepared(handle, item.name, item.bound.count, $0, item.bound.lengths, item.bound.formats, 0) }
            guard queued == 1 else { return .broken }
        }
        guard PQpipelineSync(handle) == 1 else { return .broken }
        // Each statement: one result, then the NULL that ends it. After a failure the server skips the rest
        // (PGRES_PIPELINE_ABORTED each). Then the Sync's result, once the transaction has ended.
        var rows: [[PostgresRow]] = []
        var failed = false
        for _ in ready {
            guard let result = PQgetResult(handle) else { return .broken }
            switch PQresultStatus(result) {
            case PGRES_TUPLES_OK, PGRES_COMMAND_OK:
                if let read = try? consume(result) { rows.append(read) } else { failed = true }
            default:
                PQclear(result)
                failed = true
            }
            if let unexpected = PQgetResult(handle) {
                PQclear(unexpected)
                return .broken
            }
        }
        guard let sync = PQgetResult(handle) else { return .broken }
        let synced = PQresultStatus(sync) == PGRES_PIPELINE_SYNC
        PQclear(sync)
        guard synced, isHealthy else { return .broken }
        return failed ? .rolledBack : .committed(rows)
    }

    private func lostError() -> PostgresError {
        let message = Self.trimmed(PQerrorMessage(handle))
        return PostgresError(sqlState: nil, message: message.isEmpty ? "no answer from the server" : message, connectionLost: true)
    }

    private func forgetPrepared() {
        _ = try? execute("DEALLOCATE ALL")
        prepared.removeAll()
    }

    /// The name of `sql` prepared on this session (with the parameter types of its first use; a null's type,
    /// 0, lets the server infer it from the statement).
    private func prepare(_ sql: String, types: [Oid]) throws(PostgresError) -> String {
        if let name = prepared[sql] { return name }
        let name = "twobits_\(prepared.count + 1)"
        _ = try consume(PQprepare(handle, name, sql, Int32(types.count), types))
        prepared[sql] = name
        return name
    }

    /// BEGIN, `body`, COMMIT; ROLLBACK when `body` throws (unless the connection is gone).
    func transaction<T>(_ body: (PostgresConnection) throws(PostgresError) -> T) throws(PostgresError) -> T {
        try execute("BEGIN")
        do {
            let value = try body(self)
            try execute("COMMIT")
            return value
        } catch {
            if isHealthy { _ = try? execute("ROLLBACK") }
            throw error
        }
    }

    private func consume(_ result: OpaquePointer?) throws(PostgresError) -> [PostgresRow] {
        guard let result else {
            throw PostgresError(sqlState: nil, message: Self.trimmed(PQerrorMessage(handle)), connectionLost: !isHealthy)
        }
        defer { PQclear(result) }
        switch PQresultStatus(result) {
        case PGRES_COMMAND_OK, PGRES_EMPTY_QUERY:
            return []
        case PGRES_TUPLES_OK:
            return Self.rows(result)
        default:
            let state = PQresultErrorField(result, Int32(UInt8(ascii: "C"))).map { String(cString: $0) }
            var message = PQresultErrorField(result, Int32(UInt8(ascii: "M"))).map { String(cString: $0) } ?? ""
            if message.isEmpty { message = Self.trimmed(PQresultErrorMessage(result)) }
            if message.isEmpty { message = Self.trimmed(PQerrorMessage(handle)) }
            throw PostgresError(sqlState: state, message: message, connectionLost: !isHealthy)
        }
    }

    private static func rows(_ result: OpaquePointer) -> [PostgresRow] {
        let count = Int(PQntuples(result))
        let fields = Int(PQnfields(result))
        let names = (0..<fields).map { String(cString: PQfname(result, Int32($0))) }
        let types = (0..<fields).map { PQftype(result, Int32($0)) }
        var rows: [PostgresRow] = []
        rows.reserveCapacity(count)
        for r in 0..<count {
            var values: [PostgresValue] = []
            values.reserveCapacity(fields)
            for f in 0..<fields {
                if PQgetisnull(result, Int32(r), Int32(f)) == 1 { values.append(.null); continue }
                let text = String(cString: PQgetvalue(result, Int32(r), Int32(f)))
                switch types[f] {
                case 20, 21, 23, 26: values.append(Int64(text).map { .integer($0) } ?? .text(text))
                case 17: values.append(.bytea(Self.unhex(text)))
                default: values.append(.text(text))
                }
            }
            rows.append(PostgresRow(columns: names, values: values))
        }
        return rows
    }

    /// bytea's text output (`\x` then hex digits, the default `bytea_output`).
    private static func unhex(_ text: String) -> Data {
        var bytes = Array(text.utf8)
        guard bytes.count >= 2, bytes[0] == UInt8(ascii: "\\"), bytes[1] == UInt8(ascii: "x") else { return Data(bytes) }
        bytes.removeFirst(2)
        func nibble(_ c: UInt8) -> UInt8 {
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
            default: return c &- UInt8(ascii: "A") &+ 10
            }
        }
        var out = Data(capacity: bytes.count / 2)
        var i = 0
        while i + 1 < bytes.count {
            out.append(nibble(bytes[i]) << 4 | nibble(bytes[i + 1]))
            i += 2
        }
        return out
    }

    /// libpq's parse errors quote the piece they stumbled on, which may be the password (`unexpected spaces
    /// found in "…"` is about a password with a space): the string is parsed first, and such a message is
    /// given with its quoted pieces hidden. What libpq says after a successful parse names hosts, not secrets.
    static func checkParses(_ connectionString: String) throws(PostgresError) {
        var failure: UnsafeMutablePointer<CChar>?
        if let options = PQconninfoParse(connectionString, &failure) {
            PQconninfoFree(options)
            return
        }
        let message = failure.map { quotedPiecesHidden(trimmed($0)) } ?? "out of memory"
        if let failure { PQfreemem(failure) }
        throw PostgresError(sqlState: nil, message: "the connection string is not valid: \(message)", connectionLost: true)
    }

    /// `text` with every `"…"` replaced by `"***"` (an unterminated quote hides the rest).
    static func quotedPiecesHidden(_ text: String) -> String {
        var out = ""
        var inside = false
        for character in text {
            if character == "\"" {
                if !inside { out += "\"***" } else { out += "\"" }
                inside.toggle()
            } else if !inside {
                out.append(character)
            }
        }
        return inside ? out + "\"" : out
    }

    private static func trimmed(_ message: UnsafePointer<CChar>?) -> String {
        guard let message else { return "" }
        // One line: libpq adds hints on lines of their own ("\n\tIs the server running…"), log lines are single.
        return String(cString: message).split(whereSeparator: \.isNewline).map { $0.split(whereSeparator: \.isWhitespace).joined(separator: " ") }
            .filter { !$0.isEmpty }.joined(separator: " ")
    }
}
