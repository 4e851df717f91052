/// Where the ledger lives: a SQLite file (one process) or a PostgreSQL server shared by replicas.
///
/// `database` (or `TWOBITS_DATABASE`) names either: a PostgreSQL connection string in one of libpq's two
/// forms, a `postgres://` or `postgresql://` URI (several hosts included: `postgresql://u:p@h1:5432,h2:5433/db?target_session_attrs=read-write`)
/// or keyword/value pairs (`host=db user=twobits password='a b' dbname=twobits`), given to libpq
/// intact (libpq then also honours its environment variables, `PGPASSWORD`, `PGSSLMODE`…); or a plain
/// file path. Anything else (another scheme, something that looks like credentials or settings) is
/// refused: it would otherwise become a private SQLite file named after it, password included. A
/// connection string may hold a password, so it is only ever shown through `description`, which hides it.
public enum DatabaseLocation: Sendable, Equatable, CustomStringConvertible {
    case sqlite(path: String)
    /// A connection string as libpq reads it (a URI or keyword/value pairs).
    case postgres(uri: String)

    /// Reads the setting; a relative SQLite path is resolved against `baseDirectory`. Fails, without
    /// repeating any password, on a text that is neither a PostgreSQL connection string nor a plain path.
    public init(_ text: String, baseDirectory: String = ".") throws(ConfigurationError) {
        let lower = text.lowercased()
        if lower.hasPrefix("postgres://") || lower.hasPrefix("postgresql://") || Self.isKeywordValueConnectionString(text) {
            self = .postgres(uri: text)
            return
        }
        if let problem = Self.notAPlainPath(text) {
            // The text is not repeated: a malformed one may hide its password from any redaction.
            throw ConfigurationError("database", "\(problem); give a file path for SQLite, or a PostgreSQL URI (postgresql://host:5432/dbname) or libpq keyword/value pairs (host=… user=… dbname=…)")
        }
        self = .sqlite(path: text.hasPrefix("/") || baseDirectory == "." ? text : baseDirectory + "/" + text)
    }

    /// The location for logs and messages: any password in it replaced by `***` (`CredentialRedaction`).
    public var description: String {
        switch self {
        case .sqlite(let path): return path
        case .postgres(let uri): return CredentialRedaction.redacted(uri)
        }
    }

    /// Why `text` is not taken for a SQLite path, or nil when it is a plain path.
    static func notAPlainPath(_ text: String) -> String? {
        if text.isEmpty { return "the database setting is empty" }
        if text.contains(where: { $0.isNewline || $0.asciiValue.map { $0 < 0x20 || $0 == 0x7f } == true }) {
            return "the database setting holds a control character"
        }
        if text.contains("://") || text.lowercased().hasPrefix("postgres:") || text.lowercased().hasPrefix("postgresql:") {
            return "the database setting is a URI but not a postgres:// or postgresql:// one"
        }
        if text.contains("=") { return "the database setting looks like connection settings but is not libpq's keyword/value form" }
        // user:password@host written without a scheme.
        if let at = text.lastIndex(of: "@"), text[..<at].contains(":") { return "the database setting looks like credentials (user:password@host) without postgresql://" }
        return nil
    }

    /// Whether `text` is libpq's keyword/value form: `keyword = value` pairs separated by spaces, each
    /// value unquoted (backslash escapes) or single-quoted (backslash escapes), keywords lower-case names.
    static func isKeywordValueConnectionString(_ text: String) -> Bool {
        let c = Array(text)
        var i = 0
        var pairs = 0
        func skipSpaces() { while i < c.count, c[i].isWhitespace { i += 1 } }
        skipSpaces()
        while i < c.count {
            let keywordStart = i
            while i < c.count, c[i].isASCII, c[i].isLowercase || c[i] == "_" { i += 1 }
            guard i > keywordStart else { return false }
            skipSpaces()
            guard i < c.count, c[i] == "=" else { return false }
            i += 1
            skipSpaces()
            if i < c.count, c[i] == "'" {
                i += 1
                while i < c.count, c[i] != "'" { i += c[i] == "\\" ? 2 : 1 }
                guard i < c.count else { return false }
                i += 1
            } else {
                while i < c.count, !c[i].isWhitespace { i += c[i] == "\\" ? 2 : 1 }
            }
            pairs += 1
            skipSpaces()
        }
        return pairs > 0
    }
}
