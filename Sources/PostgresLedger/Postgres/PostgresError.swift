/// A failure reported by libpq or the server: SQLSTATE (nil when libpq failed before the server
/// answered) and libpq's message, which never holds the connection string or its password.
struct PostgresError: Error, CustomStringConvertible, Sendable {
    let sqlState: String?
    let message: String
    /// The connection is gone (or never came up): the pool must reconnect before the next job.
    let connectionLost: Bool

    init(sqlState: String?, message: String, connectionLost: Bool = false) {
        self.sqlState = sqlState
        self.message = message
        self.connectionLost = connectionLost || Self.isConnectionClass(sqlState)
    }

    /// 08xxx (connection exception) and the 57P0x shutdowns (admin, crash, cannot connect now).
    static func isConnectionClass(_ state: String?) -> Bool {
        guard let state else { return false }
        return state.hasPrefix("08") || state == "57P01" || state == "57P02" || state == "57P03"
    }

    /// The server cannot take writes: disk full (53100), an I/O error (58030), a read-only transaction
    /// (25006: a standby, or `default_transaction_read_only`), corrupt data or index (XX001, XX002).
    var isStoreFault: Bool { ["53100", "58030", "25006", "XX001", "XX002"].contains(sqlState ?? "") }

    /// A deadlock or serialization failure: the transaction may simply be run again.
    var isRetryable: Bool { sqlState == "40P01" || sqlState == "40001" }

    var description: String {
        if let sqlState { return "\(message) (SQLSTATE \(sqlState))" }
        return message
    }
}
