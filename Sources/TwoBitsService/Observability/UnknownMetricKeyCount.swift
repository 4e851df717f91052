import FoundationEssentials
import Ledger
import Locking

/// The count behind `twobits_app_attest_keys_metric_unknown`: keys in use whose risk metric is still unknown past
/// `app_attest.risk.unknown_metric_grace_seconds` (their receipts could not be refreshed). Read from the ledger at
/// most once a minute: a count over the keys table at every scrape of every replica would be a load of its own.
final class UnknownMetricKeyCount: Sendable {
    static let cacheSeconds: TimeInterval = 60

    private let store: any AppAttestReceiptStore
    private let grace: TimeInterval
    private let activeWindow: TimeInterval
    private let cached = Lock<(at: Date, count: Int)?>(nil)

    init(store: any AppAttestReceiptStore, grace: TimeInterval, activeWindow: TimeInterval) {
        self.store = store
        self.grace = grace
        self.activeWindow = activeWindow
    }

    /// The count, at most a minute old; nil when the ledger could not be read and nothing was read before.
    func read(now: Date = Date()) async -> Int? {
        let last = cached.withLock { $0 }
        if let last, now.timeIntervalSince(last.at) < Self.cacheSeconds { return last.count }
        do throws(StorageError) {
            let count = try await store.countAppAttestKeysWithUnknownMetric(attestedBefore: now.addingTimeInterval(-grace),
                                                                            activeSince: now.addingTimeInterval(-activeWindow))
            cached.withLock { $0 = (now, count) }
            return count
        } catch {
            return last?.count
        }
    }
}
