import FoundationEssentials
import Ledger
import Locking

/// Proof of life for this process's owner strings, seen by every replica: a session-level advisory lock
/// per owner (`pg_advisory_lock(hashtextextended(owner, 0))`) held on a connection of its own, outside the
/// pool. A process that dies (even by `kill -9`) drops the connection and PostgreSQL releases its locks;
/// `twobits_owner_alive(owner)` tests for them. After a reconnect every known owner is locked again.
final class Presence: Sendable {
    private struct State {
        var known: Set<String> = []
        var held: Set<String> = []
        var up = false
    }

    private let state: Lock<State>
    private let pool: ConnectionPool

    /// Takes the locks for `owners` on `connection` (already open), then keeps them on a worker of its own.
    init(uri: String, connection: PostgresConnection, owners: [String]) throws(PostgresError) {
        let state = Lock(State(known: Set(owners)))
        self.state = state
        try Self.lockAll(connection, state: state)
        pool = ConnectionPool(uri: uri, size: 1, wait: .seconds(2), name: "twobits-pg-presence", idlePing: .seconds(1),
                              initial: [connection],
                              onConnect: { connection throws(PostgresError) in try Self.lockAll(connection, state: state) },
                              onLost: { state.withLock { $0.up = false; $0.held = [] } },
                              onClose: { connection in
                                  state.withLock { $0.up = false; $0.held = [] }
                                  _ = try? connection.execute("SELECT pg_advisory_unlock_all()")
                              })
    }

    /// Makes sure `owner`'s lock is held before it is written as the owner of anything; fails while the
    /// presence connection is down (another replica could otherwise take over what this one is doing).
    func ensure(_ owner: String) async throws(StorageError) {
        let held = state.withLock { s -> Bool in
            s.known.insert(owner)
            return s.up && s.held.contains(owner)
        }
        if held { return }
        let state = self.state
        try await pool.run { connection throws(PostgresError) in try Self.lockAll(connection, state: state) }
        guard state.withLock({ $0.up && $0.held.contains(owner) }) else {
            throw StorageError("PostgreSQL: the presence lock of this process is held by another session")
        }
    }

    func close() { pool.close() }

    private static func lockAll(_ connection: PostgresConnection, state: Lock<State>) throws(PostgresError) {
        let (known, held) = state.withLock { ($0.known, $0.held) }
        var nowHeld = held
        for owner in known.subtracting(held).sorted() {
            // try: a lock still held by this process's previous, dying session frees itself soon; ensure() retries.
            if try connection.query("SELECT pg_try_advisory_lock(hashtextextended($1, 0)) AS ok", [.text(owner)]).first?.bool("ok") == true {
                nowHeld.insert(owner)
            }
        }
        state.withLock {
            $0.held = nowHeld
            $0.up = true
        }
    }
}
