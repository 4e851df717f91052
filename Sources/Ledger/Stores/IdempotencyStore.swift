public import FoundationEssentials

/// Idempotency keys of keyed claims (24-hour window per client and key).
public protocol IdempotencyStore: Sendable {
    /// Reserves `key` for this request. `owner` identifies the running process, so that a twin still
    /// running (same owner) is told apart from an attempt whose process died (another owner).
    func beginIdempotent(client: String, key: String, requestHash: String, owner: String, now: Date) async throws(StorageError) -> IdempotencyBegin
    /// Records what is about to be written to Apple, before writing it.
    func recordIntent(client: String, key: String, intent: String) async throws(StorageError)
    func completeIdempotent(client: String, key: String, status: Int, body: Data) async throws(StorageError)
    /// Gives a reservation back after a transient failure: forgotten when no intent was recorded (the
    /// retry runs afresh), otherwise kept without an owner (the retry must find out whether the write happened).
    func abandonIdempotent(client: String, key: String) async throws(StorageError)
}
