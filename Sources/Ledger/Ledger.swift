public import FoundationEssentials

/// Everything TwoBits remembers besides Apple's bits. SQLite by default; the protocol lets a
/// PostgreSQL implementation follow for running several instances.
///
/// Every call is `async` so that an implementation may wait on a network round trip without holding a
/// thread; records are plain Swift values. `SQLiteLedger` runs on the caller's thread (a write costs
/// tens of microseconds), its hot writes committed together once per event-loop turn.
public protocol Ledger: Sendable {
    /// Fails when the store cannot take a write (readiness). Implementations may cache the verdict for a
    /// few seconds; a database file that is no longer the file at its path fails at once.
    func checkHealth() async throws(StorageError)

    // Writes to Apple: intent before the call, resolution after (docs/policy.md, "The audit trail")
    /// Records, in one transaction, the audit event (result `pending`) and what is needed to settle it.
    /// When this throws, nothing may be written to Apple.
    func recordWriteIntent(_ intent: WriteIntent) async throws(StorageError)
    /// Resolves an unresolved (`pending` or `unknown`) intent; a no-op for one already resolved. Any result
    /// but `unknown` forgets what was kept to settle it. `bitsAfter` replaces the intended bits (nil for a
    /// write that did not happen).
    func resolveWriteIntent(id: String, result: String, bitsAfter: String?, reason: String?, transactionID: String?) async throws(StorageError)
    /// Intents still `unknown` for the device token with this short digest prefix, oldest first.
    func unknownWriteIntents(tokenPrefix: String, limit: Int) async throws(StorageError) -> [WriteIntent]
    /// At start-up: every intent still `pending` was left by a process that stopped before Apple answered;
    /// they become `unknown` (reason appended). Returns how many. A shared ledger leaves alone the intents
    /// of instances still alive (another replica's writes in flight).
    func markInterruptedWriteIntents(reason: String) async throws(StorageError) -> Int

    // Audit trail
    @discardableResult
    func record(_ event: AuditEvent) async throws(StorageError) -> Int64
    /// One event by its id; nil when there is none.
    func auditEvent(id: Int64) async throws(StorageError) -> AuditEvent?
    /// Newest first; `before` is an event id cursor; only events matching `filter`.
    func auditEvents(limit: Int, before: Int64?, filter: AuditFilter) async throws(StorageError) -> [AuditEvent]

    // Idempotency (24-hour window per client and key)
    /// Reserves `key` for this request. `owner` identifies the running process, so that a twin still
    /// running (same owner) is told apart from an attempt whose process died (another owner).
    func beginIdempotent(client: String, key: String, requestHash: String, owner: String, now: Date) async throws(StorageError) -> IdempotencyBegin
    /// Records what is about to be written to Apple, before writing it.
    func recordIntent(client: String, key: String, intent: String) async throws(StorageError)
    func completeIdempotent(client: String, key: String, status: Int, body: Data) async throws(StorageError)
    /// Gives a reservation back after a transient failure: forgotten when no intent was recorded (the
    /// retry runs afresh), otherwise kept without an owner (the retry must find out whether the write happened).
    func abandonIdempotent(client: String, key: String) async throws(StorageError)

    // Pending bans and unbans by install id
    func setPendingAction(_ action: PendingDeviceAction) async throws(StorageError)
    func pendingActions() async throws(StorageError) -> [PendingDeviceAction]
    func pendingAction(installID: String) async throws(StorageError) -> PendingDeviceAction?
    func removePendingAction(installID: String) async throws(StorageError)
    /// Takes the order for `installID` for this process to apply: nil when there is none, or when a live
    /// process (this one, or another replica) has taken it and is applying it. An order taken by a process
    /// that died is taken over. Exactly one of several processes racing for it gets it.
    func claimPendingAction(installID: String) async throws(StorageError) -> PendingDeviceAction?
    /// After the write: removes the order this process took (not a newer one set since).
    func completePendingAction(installID: String) async throws(StorageError)
    /// After a failed or skipped write: gives the order this process took back, for the next install.
    func releasePendingAction(installID: String) async throws(StorageError)

    // Replay protection
    /// True the first time a device-token digest is seen within its window; false on reuse.
    func rememberDeviceToken(digest: String, until: Date, now: Date) async throws(StorageError) -> Bool
    /// Forgets a digest whose exchange failed for a transient reason, so the client can retry.
    func forgetDeviceToken(digest: String) async throws(StorageError)
    /// True for the first consume of a token id; false when already consumed.
    func consumeTokenID(_ jti: String, until: Date, now: Date) async throws(StorageError) -> Bool

    // Debug secrets (stored as SHA-256 digests)
    func addDebugSecret(name: String, digest: String, now: Date) async throws(StorageError) -> Bool
    func debugSecretNames() async throws(StorageError) -> [(name: String, createdAt: Date)]
    func deleteDebugSecret(name: String) async throws(StorageError) -> Bool
    func debugSecretName(digest: String) async throws(StorageError) -> String?

    // Signing keys (shared by every server signing with the same key directory)
    /// Records that a server started signing with key `kid` at `at`; the latest time is kept.
    func recordKeyActivation(kid: String, at: Date) async throws(StorageError)
    /// The latest activation time of each key some server has activated.
    func keyActivations() async throws(StorageError) -> [String: Date]

    // App Attest, the strong tier (docs/app-attest.md)
    /// Stores a one-time challenge by its digest, valid until `until`. False only if a live one has the same digest.
    func issueAppAttestChallenge(digest: String, until: Date, now: Date) async throws(StorageError) -> Bool
    /// Uses a challenge up: true exactly once for a live challenge, whichever process asks; false when it is
    /// unknown, expired or already used.
    func consumeAppAttestChallenge(digest: String, now: Date) async throws(StorageError) -> Bool
    /// Stores a newly attested key; false when a key with this id is already stored (it is left unchanged).
    func storeAppAttestKey(_ key: AppAttestKeyRecord) async throws(StorageError) -> Bool
    func appAttestKey(id: String) async throws(StorageError) -> AppAttestKeyRecord?
    /// Moves the key's counter to `counter` if that is strictly greater than the stored one and the key is
    /// not revoked, atomically: of several callers racing with the same counter exactly one gets `.advanced`.
    func advanceAppAttestCounter(keyID: String, to counter: UInt32) async throws(StorageError) -> CounterAdvance
    /// Revokes a key (its further assertions are refused); false when there is no such key. Revoking again
    /// keeps the first time and reason.
    func revokeAppAttestKey(keyID: String, reason: String, now: Date) async throws(StorageError) -> Bool

    // Figures for the admin console's overview (hourly counters, added to by every process)
    /// Adds each increment's count to its hourly counter, and forgets counters of hours before `forgetBefore`,
    /// in one transaction.
    func addStatistics(_ increments: [StatisticIncrement], forgetBefore: Date) async throws(StorageError)
    /// Every counter of the hours from `since` on (summed over the processes that added to them).
    func statistics(since: Date) async throws(StorageError) -> [StatisticIncrement]

    /// How many processes serve from this ledger now, this one included (at least 1): the rate limits are
    /// totals for the deployment, and each replica takes its share. One for a ledger only one process opens.
    func liveReplicas() async throws(StorageError) -> Int

    /// Releases connections and threads at shutdown; later calls fail.
    func close()
}

extension Ledger {
    /// Nothing to release by default (SQLite's connection closes when the ledger goes).
    public func close() {}

    /// One process: SQLite's ledger is opened by one process only.
    public func liveReplicas() async throws(StorageError) -> Int { 1 }

    /// Every event, newest first.
    public func auditEvents(limit: Int, before: Int64?) async throws(StorageError) -> [AuditEvent] {
        try await auditEvents(limit: limit, before: before, filter: AuditFilter())
    }
}
