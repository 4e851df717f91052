import Ledger
import Locking

/// Write-intent resolutions this process could not save: Apple had answered (or the write was called off)
/// but the ledger failed right then, so the audit event would stay `pending` while this process lives (the
/// start-up reconciliation only settles the intents of processes that are gone). The service saves them
/// every second and at shutdown, oldest first; the ledger ignores a resolution of an event already settled.
final class UnsavedResolutions: Sendable {
    struct Resolution: Sendable {
        let id: String
        let result: AuditResult
        let bitsAfter: String?
        let reason: String?
        let transactionID: String?
    }

    private struct State {
        var waiting: [Resolution] = []
        /// One retry at a time: two would write the same resolutions twice, and drop each other's progress.
        var retrying = false
    }

    private let state = Lock(State())

    /// The most kept at once: past it (a long outage under load) a resolution is dropped, and its event waits
    /// `pending` for the reconciliation after the next start, as it would have without this list.
    static let limit = 10_000

    /// Saves `resolution` now, or keeps it for a retry when the ledger fails.
    func save(_ resolution: Resolution, in ledger: any WriteIntentStore) async {
        do { try await write(resolution, in: ledger) } catch {
            state.withLock { if $0.waiting.count < Self.limit { $0.waiting.append(resolution) } }
        }
    }

    /// Saves the resolutions kept so far, oldest first, stopping at the first failure; returns at once when
    /// there are none or another retry is running.
    func retry(in ledger: any WriteIntentStore) async {
        let kept = state.withLock { s -> [Resolution] in
            guard !s.retrying, !s.waiting.isEmpty else { return [] }
            s.retrying = true
            return s.waiting
        }
        guard !kept.isEmpty else { return }
        var saved = 0
        for resolution in kept {
            do { try await write(resolution, in: ledger) } catch { break }
            saved += 1
        }
        // Only this retry removes, and `save` only appends: the first `saved` are the ones written.
        state.withLock { s in
            s.waiting.removeFirst(saved)
            s.retrying = false
        }
    }

    var count: Int { state.withLock { $0.waiting.count } }

    private func write(_ r: Resolution, in ledger: any WriteIntentStore) async throws(StorageError) {
        try await ledger.resolveWriteIntent(id: r.id, result: r.result, bitsAfter: r.bitsAfter, reason: r.reason, transactionID: r.transactionID)
    }
}
