import FoundationEssentials
import Ledger
import Locking

/// Proof of life for this process's owner strings, seen by every replica: a session-level advisory lock
/// per owner (`pg_advisory_lock(hashtextextended(owner, 0))`) held on a connection of its own, outside the
/// pool. A process that dies (even by `kill -9`) drops the connection and PostgreSQL releases its locks;
/// `twobits_owner_alive(owner)` tests for them. After a reconnect every known owner is locked again.
/// The same connection holds the replica lock, shared by every live process, whose holders are counted
/// to divide the rate limits among the replicas (`PostgresLedger.liveReplicas`).
final class Presence: Sendable {
    private struct State {
        var known: Set<String> = []
        var held: Set<String> = []
        /// Whether this process's replica lock (shared, one per live process) is held.
        var replica = false
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
                              onLost: { state.withLock { $0.up = false; $0.held = []; $0.replica = false } },
                              onClose: { connection in
                                  state.withLock { $0.up = false; $0.held = []; $0.replica = false }
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

    /// Whether this process is counted among the live replicas now (its presence connection up, the replica lock held).
    var countsAsReplica: Bool { state.withLock { $0.up && $0.replica } }

    /// Counts the live replicas: the sessions of this database that hold the replica lock. A process that
    /// dies drops its presence connection and stops counting as soon as PostgreSQL notices.
    static let countReplicasSQL = """
        SELECT count(*) AS n FROM pg_locks
        WHERE locktype = 'advisory' AND granted AND objsubid = 2
          AND classid = \(PostgresMigrations.lockNamespace)::oid AND objid = \(PostgresMigrations.replicaLock)::oid
          AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
        """

    private static func lockAll(_ connection: PostgresConnection, state: Lock<State>) throws(PostgresError) {
        let (known, held, replica) = state.withLock { ($0.known, $0.held, $0.replica) }
        var nowHeld = held
        // Shared: every replica holds it at once; no one takes it exclusively.
        var nowReplica = replica
        if !replica {
            nowReplica = try connection.query(
                "SELECT pg_try_advisory_lock_shared(\(PostgresMigrations.lockNamespace), \(PostgresMigrations.replicaLock)) AS ok").first?.bool("ok") == true
        }
        for owner in known.subtracting(held).sorted() {
            // try: a lock still held by this process's previous, dying session frees itself soon; ensure() retries.
            if try connection.query("SELECT pg_try_advisory_lock(hashtextextended($1, 0)) AS ok", [.text(owner)]).first?.bool("ok") == true {
                nowHeld.insert(owner)
            }
        }
        state.withLock {
            $0.held = nowHeld
            $0.replica = nowReplica
            $0.up = true
        }
    }
}
