import FoundationEssentials

/// Versioned schema changes, applied in order at startup. `PRAGMA user_version` records the last one
/// applied; append new steps, never edit old ones.
enum SchemaMigrations {
    static let steps: [String] = [
        // 1: the ledger
        """
        CREATE TABLE audit_events (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            at_ms INTEGER NOT NULL,
            client TEXT NOT NULL,
            action TEXT NOT NULL,
            subject TEXT,
            bits_before TEXT,
            bits_after TEXT,
            result TEXT NOT NULL,
            reason TEXT,
            transaction_id TEXT,
            token_prefix TEXT
        );
        CREATE TABLE idempotency_keys (
            client TEXT NOT NULL,
            key TEXT NOT NULL,
            request_hash TEXT NOT NULL,
            created_ms INTEGER NOT NULL,
            intent TEXT,
            status INTEGER,
            body BLOB,
            PRIMARY KEY (client, key)
        );
        CREATE INDEX idempotency_keys_created ON idempotency_keys (created_ms);
        CREATE TABLE pending_actions (
            install_id TEXT PRIMARY KEY,
            kind TEXT NOT NULL CHECK (kind IN ('ban', 'unban')),
            reason TEXT,
            client TEXT NOT NULL,
            created_ms INTEGER NOT NULL
        );
        CREATE TABLE device_token_uses (
            digest TEXT PRIMARY KEY,
            expires_ms INTEGER NOT NULL
        );
        CREATE INDEX device_token_uses_expiry ON device_token_uses (expires_ms);
        CREATE TABLE consumed_token_ids (
            jti TEXT PRIMARY KEY,
            expires_ms INTEGER NOT NULL
        );
        CREATE INDEX consumed_token_ids_expiry ON consumed_token_ids (expires_ms);
        CREATE TABLE debug_secrets (
            name TEXT PRIMARY KEY,
            digest TEXT NOT NULL UNIQUE,
            created_ms INTEGER NOT NULL
        );
        """,
        // 2: which process holds an unfinished idempotency key (a twin in progress vs. a crashed attempt)
        """
        ALTER TABLE idempotency_keys ADD COLUMN owner TEXT
        """,
        // 3: every Apple write is audited as an intent (result `pending`) before the call and resolved after
        // (`ok`/`banned`, `failed`, `unknown`); `write_intents` keeps what is needed to settle an unresolved
        // one by a later query with the same device token (found by its short digest prefix, never the
        // token), until it is settled. `health_probe` is the row readiness rewrites to prove a write.
        """
        ALTER TABLE audit_events ADD COLUMN intent_id TEXT;
        CREATE UNIQUE INDEX audit_events_intent ON audit_events (intent_id);
        CREATE TABLE write_intents (
            intent_id TEXT PRIMARY KEY,
            token_prefix TEXT NOT NULL,
            bits TEXT NOT NULL,
            month TEXT NOT NULL,
            success_result TEXT NOT NULL,
            created_ms INTEGER NOT NULL
        );
        CREATE INDEX write_intents_token ON write_intents (token_prefix);
        CREATE TABLE health_probe (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            at_ms INTEGER NOT NULL
        )
        """,
        // 4: when each signing key was activated, shared by every server using the ledger (with PostgreSQL,
        // every replica); before, `<kid>.activated` files in the key directory held it.
        """
        CREATE TABLE key_activations (
            kid TEXT PRIMARY KEY,
            activated_ms INTEGER NOT NULL
        )
        """,
        // 5: which process has taken a pending order to apply it (`claimPendingAction`), so that two installs
        // arriving at once apply it once; an order taken by a process that stopped is taken over.
        """
        ALTER TABLE pending_actions ADD COLUMN claimed_by TEXT
        """,
        // 6: App Attest: one-time challenges (by digest) and the attested keys with their assertion counters.
        """
        CREATE TABLE app_attest_challenges (
            digest TEXT PRIMARY KEY,
            expires_ms INTEGER NOT NULL
        );
        CREATE TABLE app_attest_keys (
            key_id TEXT PRIMARY KEY,
            public_key BLOB NOT NULL,
            counter INTEGER NOT NULL CHECK (counter >= 0 AND counter <= 4294967295),
            receipt BLOB NOT NULL,
            environment TEXT NOT NULL,
            app_id TEXT NOT NULL,
            validation_category INTEGER,
            first_seen_ms INTEGER NOT NULL,
            revoked_ms INTEGER,
            revoked_reason TEXT
        )
        """,
        // 7: hourly counters for the admin console's overview (claims, tokens, Apple calls and their latencies).
        """
        CREATE TABLE statistics (
            hour INTEGER NOT NULL,
            family TEXT NOT NULL,
            subject TEXT NOT NULL,
            outcome TEXT NOT NULL,
            bucket INTEGER NOT NULL,
            count INTEGER NOT NULL,
            PRIMARY KEY (hour, family, subject, outcome, bucket)
        )
        """,
        // 8: App Attest receipts (docs/app-attest.md, "The risk metric"): when a key was last used, the
        // renewed receipt's times, the latest metric, the 404 stop, the back-off, and the refresher's lease;
        // the last metrics of each key.
        """
        ALTER TABLE app_attest_keys ADD COLUMN last_used_ms INTEGER;
        ALTER TABLE app_attest_keys ADD COLUMN receipt_not_before_ms INTEGER;
        ALTER TABLE app_attest_keys ADD COLUMN receipt_expires_ms INTEGER;
        ALTER TABLE app_attest_keys ADD COLUMN risk_metric INTEGER;
        ALTER TABLE app_attest_keys ADD COLUMN risk_metric_ms INTEGER;
        ALTER TABLE app_attest_keys ADD COLUMN receipt_stopped_ms INTEGER;
        ALTER TABLE app_attest_keys ADD COLUMN receipt_retry_ms INTEGER;
        ALTER TABLE app_attest_keys ADD COLUMN lease_owner TEXT;
        ALTER TABLE app_attest_keys ADD COLUMN lease_until_ms INTEGER;
        CREATE INDEX app_attest_keys_risk ON app_attest_keys (risk_metric) WHERE risk_metric IS NOT NULL;
        CREATE TABLE app_attest_risk_history (
            key_id TEXT NOT NULL,
            at_ms INTEGER NOT NULL,
            metric INTEGER NOT NULL,
            PRIMARY KEY (key_id, at_ms)
        )
        """,
        // 9: the events whose write is `unknown`, for `UnknownIntents.presence`: while one such intent is
        // unsettled, each resolution asks whether one still is, and without this index SQLite answered by
        // scanning the whole audit trail (Benchmarks/HISTORY.md, 2026-12-02). Partial: an event enters it
        // only when its write turns unknown, so the hot writes do not maintain it. The sweep of expired App
        // Attest challenges (once a second) and the count of keys without a risk metric (once a minute)
        // scanned their tables too, as the other expiring tables' sweeps do not.
        """
        CREATE INDEX audit_events_unknown ON audit_events (intent_id) WHERE result = 'unknown';
        CREATE INDEX app_attest_challenges_expiry ON app_attest_challenges (expires_ms);
        CREATE INDEX app_attest_keys_unknown_metric ON app_attest_keys (first_seen_ms) WHERE risk_metric IS NULL AND revoked_ms IS NULL
        """,
    ]

    static func apply(to db: SQLiteConnection) throws(SQLiteError) {
        let current = try db.query("PRAGMA user_version").first?.int("user_version") ?? 0
        guard current <= steps.count else {
            throw SQLiteError(code: 0, message: "the database has schema version \(current), newer than this build knows (\(steps.count)); upgrade TwoBits")
        }
        for version in current..<steps.count {
            try db.transaction { tx throws(SQLiteError) in
                for statement in steps[version].split(separator: ";") where !statement.allSatisfy(\.isWhitespace) {
                    try tx.query(String(statement))
                }
                try tx.query("PRAGMA user_version = \(version + 1)")
            }
        }
    }
}
