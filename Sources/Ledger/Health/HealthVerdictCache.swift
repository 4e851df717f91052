import Locking

/// The readiness verdict on the store, shared by the ledgers' `checkHealth`: the last write probe's
/// verdict, reused for `interval` (`/readyz` may be polled often, and a write to the store each time is
/// waste), and the outcome of the real writes.
///
/// The probe alone can lie: on a full disk its one-row upsert fits in pages already allocated while every
/// real write, which needs new pages, fails. So a real write that fails for a reason of the store's own
/// (`realWriteFailed`) makes the store not ready for `hold` after the failure; after that a probe (or the
/// next readiness check's probe) decides again. Under sustained failures with traffic the store stays not
/// ready; without traffic (a load balancer took the instance out) it comes back at most once per `hold`,
/// until its first failing real write takes it out again: no faster flapping than `hold`.
public final class HealthVerdictCache: Sendable {
    private let interval: Duration
    private let hold: Duration
    private let last = Lock<(at: ContinuousClock.Instant, error: StorageError?)?>(nil)
    private let lastRealWriteFailure = Lock<(at: ContinuousClock.Instant, error: StorageError)?>(nil)

    /// `hold`: how long a real write's storage failure keeps the store not ready.
    public init(interval: Duration, hold: Duration = .seconds(30)) {
        self.interval = interval
        self.hold = hold
    }

    /// True for a success younger than `interval`, rethrows a failure that young (or a real write's failure
    /// younger than `hold`); false when a probe is due.
    public func recent() throws(StorageError) -> Bool {
        let now = ContinuousClock.now
        if let failure = lastRealWriteFailure.withLock({ $0 }) {
            if now - failure.at < hold { throw failure.error }
            // Held long enough: the next probe decides, and it must be a fresh one.
            return false
        }
        guard let cached = last.withLock({ $0 }), now - cached.at < interval else { return false }
        if let error = cached.error { throw error }
        return true
    }

    /// Keeps the verdict of a probe that started at `at`, then rethrows its failure. A success after the
    /// hold of a real write's failure ends it.
    public func remember(_ failure: StorageError?, at: ContinuousClock.Instant) throws(StorageError) {
        last.withLock { $0 = (at, failure) }
        if failure == nil {
            lastRealWriteFailure.withLock { held in
                if let f = held, at - f.at >= hold { held = nil }
            }
        }
        if let failure { throw failure }
    }

    /// A real write failed because of the store (full, read-only, corrupt, unreachable): not ready for `hold`.
    public func realWriteFailed(_ error: StorageError) {
        let now = ContinuousClock.now
        lastRealWriteFailure.withLock { $0 = (now, error) }
    }
}
