import Locking

/// The last readiness probe's verdict, reused for `interval`: `/readyz` may be polled often, and a
/// write to the store each time is waste. Shared by the ledgers' `checkHealth`.
public final class HealthVerdictCache: Sendable {
    private let interval: Duration
    private let last = Lock<(at: ContinuousClock.Instant, error: StorageError?)?>(nil)

    public init(interval: Duration) { self.interval = interval }

    /// True for a success younger than `interval`, rethrows a failure that young; false when a probe is due.
    public func recent() throws(StorageError) -> Bool {
        guard let cached = last.withLock({ $0 }), ContinuousClock.now - cached.at < interval else { return false }
        if let error = cached.error { throw error }
        return true
    }

    /// Keeps the verdict of a probe that started at `at`, then rethrows its failure.
    public func remember(_ failure: StorageError?, at: ContinuousClock.Instant) throws(StorageError) {
        last.withLock { $0 = (at, failure) }
        if let failure { throw failure }
    }
}
