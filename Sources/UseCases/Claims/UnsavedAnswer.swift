import Ledger

/// The answer of a keyed claim that Apple carried out but whose answer the ledger failed to store under the
/// `Idempotency-Key`. The client got its answer (Apple had written: 503 `storage_unavailable` would say it had
/// not); the key stays this live process's, with its intent, until the answer is stored: kept in a `RetryQueue`
/// as a write's resolution is (`WriteResolution+Save.swift`), saved before each keyed claim, every second and at
/// shutdown. Past the queue's limit the key is given back instead (its retry resumes from the intent). Should
/// the process die first, the key's intent makes the retry resume and find the claim in place.
struct UnsavedAnswer: Sendable {
    /// The most kept at once.
    static let limit = 10_000

    let client: String
    let key: String
    let answer: RecordedAnswer

    func store(in ledger: any IdempotencyStore) async throws(StorageError) {
        try await ledger.completeIdempotent(client: client, key: key, status: answer.status, body: answer.body)
    }
}
