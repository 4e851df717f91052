import Locking

/// The readiness verdict on the store, shared by the ledgers' `checkHealth`: the last write probe's
/// verdict, reused for `interval` (`/readyz` may be polled often, and a write to the store each time is
/// waste), and the outcome of the real writes.
///
/// The probe alone can lie: on a full disk its one-row upsert fits in pages already allocated while the
/// real writes, which need new pages, fail. So a real write that fails for a reason of the store's own
/// (`realWriteFailed`) makes the store not ready at once, for a hold; after the hold a fresh probe
/// decides again. Under sustained failures with traffic the store stays not ready (each failure starts the
/// hold again). Without traffic (a load balancer took the instance out) a lying probe brings it back,
/// and its first failing write takes it out again: to keep that from flapping, a failure soon after a
/// recovery doubles the hold (`baseHold` up to `maxHold`); a quiet `calmAfter` resets it.
public final class HealthVerdictCache: Sendable {
    private struct RealWrites {
        var failedAt: ContinuousClock.Instant?
        var failure: StorageError?
        var hold: Duration
        var recoveredAt: ContinuousClock.Instant?
    }

    private let interval: Duration
    private let baseHold: Duration
    private let maxHold: Duration
    private let calmAfter: Duration
    private let last = Lock<(at: ContinuousClock.Instant, error: StorageError?)?>(nil)
    private let realWrites: Lock<RealWrites>
    private let now: @Sendable () -> ContinuousClock.Instant

    /// `now`: the clock (tests move their own).
    public init(interval: Duration, baseHold: Duration = .seconds(5), maxHold: Duration = .seconds(80), calmAfter: Duration = .seconds(300),
                now: @escaping @Sendable () -> ContinuousClock.Instant = { ContinuousClock.now }) {
        self.now = now
        self.interval = interval
        self.baseHold = baseHold
        self.maxHold = maxHold
        self.calmAfter = calmAfter
        realWrites = Lock(RealWrites(hold: baseHold))
    }

    /// True for a success younger than `interval`, rethrows a failure that young, or a real write's failure
    /// still within its hold; false when a probe is due.
    public func recent() throws(StorageError) -> Bool {
        let now = self.now()
        let held = realWrites.withLock { w -> (failure: StorageError, within: Bool)? in
            guard let at = w.failedAt, let failure = w.failure else { return nil }
            return (failure, now - at < w.hold)
        }
        if let held {
            if held.within { throw held.failure }
            // The hold is over: a fresh probe decides.
            return false
        }
        guard let cached = last.withLock({ $0 }), now - cached.at < interval else { return false }
        if let error = cached.error { throw error }
        return true
    }

    /// Keeps the verdict of a probe that started at `at`, then rethrows its failure. A success that started
    /// after the hold of a real write's failure ends it.
    public func remember(_ failure: StorageError?, at: ContinuousClock.Instant) throws(StorageError) {
        last.withLock { $0 = (at, failure) }
        if failure == nil {
            realWrites.withLock { w in
                if let failedAt = w.failedAt, at - failedAt >= w.hold {
                    w.failedAt = nil
                    w.failure = nil
                    w.recoveredAt = at
                }
            }
        }
        if let failure { throw failure }
    }

    /// A real write failed because of the store (full, read-only, corrupt): not ready from now, for the hold.
    public func realWriteFailed(_ error: StorageError) {
        let now = self.now()
        realWrites.withLock { w in
            if w.failedAt == nil {
                // A new episode: soon after the last recovery the hold doubles, after a calm it starts again.
                if let recovered = w.recoveredAt, now - recovered < calmAfter {
                    w.hold = min(w.hold * 2, maxHold)
                } else {
                    w.hold = baseHold
                }
            }
            w.failedAt = now
            w.failure = error
        }
    }
}
