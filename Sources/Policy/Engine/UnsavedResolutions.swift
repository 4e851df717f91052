import Ledger
import Locking

/// Write-intent resolutions this process could not save: Apple had answered (or the write was called off)
/// but the ledger failed right then, so the audit event would stay `pending` while this process lives (the
/// start-up reconciliation only settles the intents of processes that are gone). They are saved at the next
/// write this process makes and by the service's one-second retry, in the order they were made; the
/// ledger ignores a resolution of an event already settled.
final class UnsavedResolutions: Sendable {
    struct Resolution: Sendable {
        let id: String
        let result: String
        let bitsAfter: String?
        let reason: String?
        let transactionID: String?
    }

    private let waiting = Lock<[Resolution]>([])

    /// The most kept at once: past it (a long outage under load) a resolution is dropped, and its event waits
    /// `pending` for the reconciliation after the next start, as it would have without this list.
    static let limit = 10_000

    /// Saves `resolution` now, or keeps it for a retry when the ledger fails.
    func save(_ resolution: Resolution, in ledger: any Ledger) async {
        do { try await write(resolution, in: ledger) } catch {
            waiting.withLock { if $0.count < Self.limit { $0.append(resolution) } }
        }
    }

    /// Saves the resolutions kept so far, oldest first, stopping at the first failure (a lock check only,
    /// when there are none).
    func retry(in ledger: any Ledger) async {
        let kept = waiting.withLock { $0 }
        guard !kept.isEmpty else { return }
        for resolution in kept {
            do { try await write(resolution, in: ledger) } catch { return }
            waiting.withLock { list in list.removeAll { $0.id == resolution.id } }
        }
    }

    var count: Int { waiting.withLock { $0.count } }

    private func write(_ r: Resolution, in ledger: any Ledger) async throws(StorageError) {
        try await ledger.resolveWriteIntent(id: r.id, result: r.result, bitsAfter: r.bitsAfter, reason: r.reason, transactionID: r.transactionID)
    }
}
