import FoundationEssentials
public import Ledger
import Locking
import Mechanisms

/// The shared ledger for replicas: PostgreSQL through libpq, bounded pools of blocking connections on
/// threads of their own (no event loop waits on the network). Same statements and semantics as
/// `SQLiteLedger`; what one process guaranteed alone holds across replicas by the database's own means
/// (conflict clauses, row locks, advisory locks: see each extension).
///
/// Two pools: `pipelines`, a few connections that carry the one-statement calls (most of them: a fallback
/// exchange makes one, a claim three), as many as are queued per round trip; and `pool` for the calls that
/// need a transaction of several statements, one call per connection at a time.
public final class PostgresLedger: Ledger {
    let pool: ConnectionPool
    let pipelines: ConnectionPool
    let presence: Presence
    /// This instance, as the owner of the write intents it records (its presence lock is taken at init).
    let instance: String
    /// Kept for `importTables`/`tableCounts`, which open a connection of their own; never printed.
    private let uri: String
    let sweeper = ExpirySweeper()
    /// The last readiness probe's verdict, reused for 1.5 s.
    private let lastProbe = HealthVerdictCache(interval: .milliseconds(1500))
    /// Told each call's duration, the wait for a connection included (the ledger latency metric).
    let observer: (any LedgerCallObserver)?

    /// Connects (fails with a clear StorageError if the server cannot be reached), applies migrations unless told not to.
    /// A schema newer than this build is refused; without `applyMigrations`, so is an older one (run `twobits migrate`).
    /// `poolSize` connections for transactions and `pipelineConnections` for single statements, each on a
    /// thread of its own, plus one holding this instance's presence locks; a call no connection takes up
    /// within `poolWait` fails with a StorageError.
    public init(uri: String, poolSize: Int = 8, pipelineConnections: Int = 2, poolWait: Duration = .seconds(2), applyMigrations: Bool = true,
                observer: (any LedgerCallObserver)? = nil) throws(StorageError) {
        self.uri = uri
        self.observer = observer
        instance = "ledger-" + UUID().uuidString
        let first = try Self.connect(uri)
        do throws(PostgresError) {
            if applyMigrations {
                try PostgresMigrations.apply(to: first)
            } else {
                let current = try PostgresMigrations.version(first)
                if current > PostgresMigrations.latest { throw PostgresError(sqlState: nil, message: PostgresMigrations.newerMessage(current)) }
                if current < PostgresMigrations.latest {
                    throw PostgresError(sqlState: nil, message: "the database has schema version \(current), older than this build needs (\(PostgresMigrations.latest)); run twobits migrate")
                }
            }
            presence = try Presence(uri: uri, connection: first, owners: [instance])
        } catch { throw StorageError("PostgreSQL: \(error)") }
        pool = ConnectionPool(uri: uri, size: poolSize, wait: poolWait, name: "twobits-pg")
        pipelines = ConnectionPool(uri: uri, size: pipelineConnections, wait: poolWait, name: "twobits-pgpipe")
    }

    deinit { close() }

    /// `twobits migrate`: applies pending steps; returns the versions before and after.
    public static func migrate(uri: String) throws(StorageError) -> (from: Int, to: Int) {
        let db = try connect(uri)
        do { return try PostgresMigrations.apply(to: db) } catch { throw StorageError("PostgreSQL: \(error)") }
    }

    /// The schema version this build creates and understands.
    public static var latestSchemaVersion: Int { PostgresMigrations.latest }

    /// The schema version recorded in the database.
    public func schemaVersion() async throws(StorageError) -> Int {
        try await pool.run { db throws(PostgresError) in try PostgresMigrations.version(db) }
    }

    /// The processes holding the replica lock on their presence connections; this one counts even while
    /// its own presence connection is down (it is alive: it is asking).
    public func liveReplicas() async throws(StorageError) -> Int {
        let counted = try await statement(Presence.countReplicasSQL, []).first?.int("n") ?? 0
        return counted + (presence.countsAsReplica ? 0 : 1)
    }

    /// Closes every connection (and releases this instance's presence lock).
    public func close() {
        pool.close()
        pipelines.close()
        presence.close()
    }

    /// Proves the database takes a write: a one-row upsert at most every 1.5 s (the
    /// verdict is cached in between). The error says why ("PostgreSQL unreachable: …", "no PostgreSQL
    /// connection free…"), never the URI.
    public func checkHealth() async throws(StorageError) {
        if try lastProbe.recent() { return }
        let now = ContinuousClock.now
        var failure: StorageError?
        do {
            let nowMS = Self.ms(Date())
            try await statement("INSERT INTO health_probe (id, at_ms) VALUES (1, $1) ON CONFLICT (id) DO UPDATE SET at_ms = excluded.at_ms",
                                [.integer(nowMS)])
        } catch { failure = error }
        try lastProbe.remember(failure, at: now)
    }

    @discardableResult
    func run<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) throws(PostgresError) -> T) async throws(StorageError) -> T {
        try await timed { () async throws(StorageError) in try await pool.run(body) }
    }

    /// Runs one statement on the `pipelines` connections, where statements queued at the same moment share a
    /// round trip and a commit, each with the outcome it would have alone. The hot single-statement ledger
    /// calls go through here.
    @discardableResult
    func statement(_ sql: String, _ parameters: [PostgresValue]) async throws(StorageError) -> [PostgresRow] {
        try await timed { () async throws(StorageError) in try await pipelines.execute(sql, parameters) }
    }

    /// Tells the observer (the ledger latency metric) how long `call` took, the wait for a connection included;
    /// a failure of the server's own makes storage not ready (`HealthVerdictCache.realWriteFailed`).
    private func timed<T>(_ call: () async throws(StorageError) -> T) async throws(StorageError) -> T {
        let start = observer == nil ? nil : ContinuousClock.now
        defer { if let start, let observer { observer.ledgerCallFinished(seconds: (ContinuousClock.now - start).inSeconds) } }
        do { return try await call() } catch {
            if error.storeFault { lastProbe.realWriteFailed(error) }
            throw error
        }
    }

    /// A direct connection for the synchronous admin paths (`migrate`, `importTables`, `tableCounts`).
    static func connect(_ uri: String) throws(StorageError) -> PostgresConnection {
        do { return try PostgresConnection(uri: uri) } catch { throw StorageError("PostgreSQL unreachable: \(error.message)", kind: .unreachable) }
    }

    func directConnection() throws(StorageError) -> PostgresConnection { try Self.connect(uri) }

    static func ms(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1000).rounded()) }
}
