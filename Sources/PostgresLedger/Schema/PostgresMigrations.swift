/// Versioned schema steps for PostgreSQL, recorded in `schema_migrations`. Every replica runs `apply` at
/// start-up: one transaction under a transaction-level advisory lock, so replicas starting together apply
/// each step once (the others wait on the lock, then find nothing left to do). Append steps, never edit them.
enum PostgresMigrations {
    /// Advisory lock keys in the two-int4 form (`objsubid` 2 in `pg_locks`), apart from the owners'
    /// one-bigint keys (`objsubid` 1). The first half spells "TB".
    static let lockNamespace: Int32 = 0x5442
    static let migrationLock: Int32 = 1
    /// Held shared by every live replica on its presence connection (`Presence`); 3-6 are the expiry sweeps'.
    static let replicaLock: Int32 = 2

    static let steps: [String] = [
        // 1: SQLite's schema after its migration 4, translated: BIGSERIAL audit ids (one ordered history
        // across replicas), BIGINT millisecond times, bytea bodies; `write_intents.owner` names the ledger
        // instance that recorded the intent, so that start-up marks only intents of instances that are gone.
        // `twobits_owner_alive` says whether an owner's presence lock (`pg_advisory_lock(hashtextextended(owner, 0))`,
        // held by its live process on a connection of its own) is held by any session of this database.
        """
        CREATE TABLE audit_events (
            id BIGSERIAL PRIMARY KEY,
            at_ms BIGINT NOT NULL,
            client TEXT NOT NULL,
            action TEXT NOT NULL,
            subject TEXT,
            bits_before TEXT,
            bits_after TEXT,
            result TEXT NOT NULL,
            reason TEXT,
            transaction_id TEXT,
            token_prefix TEXT,
            intent_id TEXT
        );
        CREATE UNIQUE INDEX audit_events_intent ON audit_events (intent_id);
        CREATE INDEX audit_events_pending ON audit_events (result) WHERE result IN ('pending', 'unknown');
        CREATE TABLE idempotency_keys (
            client TEXT NOT NULL,
            key TEXT NOT NULL,
            request_hash TEXT NOT NULL,
            created_ms BIGINT NOT NULL,
            intent TEXT,
            status BIGINT,
            body BYTEA,
            owner TEXT,
            PRIMARY KEY (client, key)
        );
        CREATE INDEX idempotency_keys_created ON idempotency_keys (created_ms);
        CREATE TABLE pending_actions (
            install_id TEXT PRIMARY KEY,
            kind TEXT NOT NULL CHECK (kind IN ('ban', 'unban')),
            reason TEXT,
            client TEXT NOT NULL,
            created_ms BIGINT NOT NULL
        );
        CREATE TABLE device_token_uses (
            digest TEXT PRIMARY KEY,
            expires_ms BIGINT NOT NULL
        );
        CREATE INDEX device_token_uses_expiry ON device_token_uses (expires_ms);
        CREATE TABLE consumed_token_ids (
            jti TEXT PRIMARY KEY,
            expires_ms BIGINT NOT NULL
        );
        CREATE INDEX consumed_token_ids_expiry ON consumed_token_ids (expires_ms);
        CREATE TABLE debug_secrets (
            name TEXT PRIMARY KEY,
            digest TEXT NOT NULL UNIQUE,
            created_ms BIGINT NOT NULL
        );
        CREATE TABLE write_intents (
            intent_id TEXT PRIMARY KEY,
            token_prefix TEXT NOT NULL,
            bits TEXT NOT NULL,
            month TEXT NOT NULL,
            success_result TEXT NOT NULL,
            created_ms BIGINT NOT NULL,
            owner TEXT
        );
        CREATE INDEX write_intents_token ON write_intents (token_prefix);
        CREATE TABLE health_probe (
            id BIGINT PRIMARY KEY CHECK (id = 1),
            at_ms BIGINT NOT NULL
        );
        CREATE TABLE key_activations (
            kid TEXT PRIMARY KEY,
            activated_ms BIGINT NOT NULL
        );
        CREATE FUNCTION twobits_owner_alive(owner TEXT) RETURNS BOOLEAN LANGUAGE sql STABLE AS $$
            SELECT EXISTS (
                SELECT 1 FROM pg_locks l
                WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
                  AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
                  AND l.classid = ((hashtextextended(owner, 0) >> 32) & 4294967295)::oid
                  AND l.objid = (hashtextextended(owner, 0) & 4294967295)::oid
            )
        $$
        """,
        // 2: which replica has taken a pending order to apply it (`claimPendingAction`): installs of one
        // device reaching several replicas at once apply it once; an order taken by a replica that died
        // (its presence lock gone) is taken over.
        """
        ALTER TABLE pending_actions ADD COLUMN claimed_by TEXT
        """,
        // 3: App Attest: one-time challenges (by digest) and the attested keys with their assertion counters
        // (the same tables as SQLite's step 6).
        """
        CREATE TABLE app_attest_challenges (
            digest TEXT PRIMARY KEY,
            expires_ms BIGINT NOT NULL
        );
        CREATE TABLE app_attest_keys (
            key_id TEXT PRIMARY KEY,
            public_key BYTEA NOT NULL,
            counter BIGINT NOT NULL CHECK (counter >= 0 AND counter <= 4294967295),
            receipt BYTEA NOT NULL,
            environment TEXT NOT NULL,
            app_id TEXT NOT NULL,
            validation_category INTEGER,
            first_seen_ms BIGINT NOT NULL,
            revoked_ms BIGINT,
            revoked_reason TEXT
        )
        """,
        // 4: hourly counters for the admin console's overview, added to by every replica.
        """
        CREATE TABLE statistics (
            hour BIGINT NOT NULL,
            family TEXT NOT NULL,
            subject TEXT NOT NULL,
            outcome TEXT NOT NULL,
            bucket INTEGER NOT NULL,
            count BIGINT NOT NULL,
            PRIMARY KEY (hour, family, subject, outcome, bucket)
        )
        """,
        // 5: App Attest receipts (SQLite's step 8): last use, the renewed receipt's times, the latest metric,
        // the 404 stop, the back-off, the refresher's lease, and the last metrics of each key.
        """
        ALTER TABLE app_attest_keys ADD COLUMN last_used_ms BIGINT,
            ADD COLUMN receipt_not_before_ms BIGINT,
            ADD COLUMN receipt_expires_ms BIGINT,
            ADD COLUMN risk_metric BIGINT,
            ADD COLUMN risk_metric_ms BIGINT,
            ADD COLUMN receipt_stopped_ms BIGINT,
            ADD COLUMN receipt_retry_ms BIGINT,
            ADD COLUMN lease_owner TEXT,
            ADD COLUMN lease_until_ms BIGINT;
        CREATE INDEX app_attest_keys_risk ON app_attest_keys (risk_metric) WHERE risk_metric IS NOT NULL;
        CREATE TABLE app_attest_risk_history (
            key_id TEXT NOT NULL,
            at_ms BIGINT NOT NULL,
            metric BIGINT NOT NULL,
            PRIMARY KEY (key_id, at_ms)
        )
        """,
    ]

    static var latest: Int { steps.count }

    /// The version recorded, 0 for an empty database.
    static func version(_ db: PostgresConnection) throws(PostgresError) -> Int {
        let exists = try db.query("SELECT to_regclass('schema_migrations') IS NOT NULL AS present").first?.bool("present") ?? false
        guard exists else { return 0 }
        return try db.query("SELECT coalesce(max(version), 0) AS v FROM schema_migrations").first?.int("v") ?? 0
    }

    static func newerMessage(_ current: Int) -> String {
        "the database has schema version \(current), newer than this build knows (\(latest)); upgrade TwoBits"
    }

    /// Applies the missing steps; returns the versions before and after. Refuses a newer database.
    @discardableResult
    static func apply(to db: PostgresConnection) throws(PostgresError) -> (from: Int, to: Int) {
        try db.transaction { db throws(PostgresError) -> (from: Int, to: Int) in
            try db.query("SELECT pg_advisory_xact_lock(\(lockNamespace), \(migrationLock))")
            try db.execute("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())")
            let current = try version(db)
            guard current <= latest else { throw PostgresError(sqlState: nil, message: newerMessage(current)) }
            for version in current..<latest {
                try db.execute(steps[version])
                try db.query("INSERT INTO schema_migrations (version) VALUES ($1)", [.int(version + 1)])
            }
            return (current, latest)
        }
    }
}
