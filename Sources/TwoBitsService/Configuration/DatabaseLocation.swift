/// Where the ledger lives: a SQLite file (one process) or a PostgreSQL server shared by replicas.
///
/// `database` (or `TWOBITS_DATABASE`) names either: a `postgres://` or `postgresql://` URI in libpq's own
/// syntax (libpq then also honours its environment variables, `PGPASSWORD`, `PGSSLMODE`…, and `sslmode` in
/// the URI), anything else a file path. The URI may hold a password, so it is only ever shown through
/// `description`, which masks it.
public enum DatabaseLocation: Sendable, Equatable, CustomStringConvertible {
    case sqlite(path: String)
    case postgres(uri: String)

    /// Reads the setting; a relative SQLite path is resolved against `baseDirectory`.
    public init(_ text: String, baseDirectory: String = ".") {
        let lower = text.lowercased()
        if lower.hasPrefix("postgres://") || lower.hasPrefix("postgresql://") {
            self = .postgres(uri: text)
        } else {
            self = .sqlite(path: text.hasPrefix("/") || baseDirectory == "." ? text : baseDirectory + "/" + text)
        }
    }

    /// The location for logs and messages: a URI's password (in the user info or a `password=` parameter) is
    /// replaced by `***`.
    public var description: String {
        switch self {
        case .sqlite(let path): return path
        case .postgres(let uri): return Self.maskingPassword(in: uri)
        }
    }

    static func maskingPassword(in uri: String) -> String {
        var text = Substring(uri)
        var masked = ""
        // scheme://[user[:password]@]host…: the user info ends at the last '@' before the path or query.
        if let schemeEnd = text.firstRange(of: "://") {
            masked += text[..<schemeEnd.upperBound]
            text = text[schemeEnd.upperBound...]
            let authorityEnd = text.firstIndex(where: { $0 == "/" || $0 == "?" }) ?? text.endIndex
            let authority = text[..<authorityEnd]
            if let at = authority.lastIndex(of: "@") {
                let userInfo = authority[..<at]
                if let colon = userInfo.firstIndex(of: ":") {
                    masked += userInfo[..<colon] + ":***"
                } else {
                    masked += userInfo
                }
                masked += authority[at...]
            } else {
                masked += authority
            }
            text = text[authorityEnd...]
        }
        guard let query = text.firstIndex(of: "?") else { return masked + text }
        masked += text[...query]
        let parameters = text[text.index(after: query)...].split(separator: "&", omittingEmptySubsequences: false).map { parameter -> String in
            let name = parameter.split(separator: "=", maxSplits: 1).first.map(String.init) ?? ""
            return name.lowercased() == "password" ? name + "=***" : String(parameter)
        }
        return masked + parameters.joined(separator: "&")
    }
}
