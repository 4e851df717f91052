/// Writes to Apple: intent before the call, resolution after (docs/policy.md, "The audit trail").
public protocol WriteIntentStore: Sendable {
    /// Records, in one transaction, the audit event (result `pending`) and what is needed to settle it.
    /// When this throws, nothing may be written to Apple.
    func recordWriteIntent(_ intent: WriteIntent) async throws(StorageError)
    /// Resolves an unresolved (`pending` or `unknown`) intent; a no-op for one already resolved. Any result
    /// but `unknown` forgets what was kept to settle it. `bitsAfter` replaces the intended bits (nil for a
    /// write that did not happen).
    func resolveWriteIntent(id: String, result: AuditResult, bitsAfter: BitsSnapshot?, reason: String?, transactionID: String?) async throws(StorageError)
    /// Intents still `unknown` for the device token with this short digest prefix, oldest first.
    func unknownWriteIntents(tokenPrefix: String, limit: Int) async throws(StorageError) -> [WriteIntent]
    /// At start-up: every intent still `pending` was left by a process that stopped before Apple answered;
    /// they become `unknown` (reason appended). Returns how many. A shared ledger leaves alone the intents
    /// of instances still alive (another replica's writes in flight).
    func markInterruptedWriteIntents(reason: String) async throws(StorageError) -> Int
}
