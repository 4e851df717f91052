import Ledger
import Policy

// A write-intent resolution this process could not save: Apple had answered (or the write was called off)
// but the ledger failed right then, so the audit event would stay `pending` while this process lives (the
// start-up reconciliation only settles the intents of processes that are gone). Kept in a `RetryQueue`, which
// the service saves every second and at shutdown, oldest first; the ledger ignores a resolution of an event
// already settled. Past the queue's limit (a long outage under load) a resolution is dropped, and its event
// waits `pending` for the reconciliation after the next start, as it would have without the queue.
extension WriteResolution {
    /// The most kept at once.
    static let unsavedLimit = 10_000

    func save(in ledger: any WriteIntentStore) async throws(StorageError) {
        try await ledger.resolveWriteIntent(id: id, result: result, bitsAfter: bitsAfter, reason: reason, transactionID: transactionID)
    }
}
