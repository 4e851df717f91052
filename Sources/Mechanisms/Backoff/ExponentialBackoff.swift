/// Exponential back-off with jitter: after the n-th failure in a row, `base · 2^(n-1)` capped at `maximum`, of
/// which a random share, so that callers failing together do not retry together. A value: the caller keeps its
/// count of failures and draws the random number, so tests choose both.
public struct ExponentialBackoff: Sendable, Equatable {
    /// Which share of the capped delay is waited.
    public enum Jitter: Sendable, Equatable {
        /// Anywhere from nothing to the whole delay (the Apple client's retries within one call's deadline).
        case full
        /// Half the delay, plus a random half (the receipt refresher: a pause is at least half its length).
        case equal
    }

    public let base: Duration
    public let maximum: Duration
    public let jitter: Jitter

    public init(base: Duration, maximum: Duration, jitter: Jitter) {
        self.base = base
        self.maximum = maximum
        self.jitter = jitter
    }

    /// The delay before jitter after `failures` in a row (1 or more): doubled per failure, at most `maximum`.
    public func ceiling(afterFailures failures: Int) -> Duration {
        // Capped at 2^30: the cap is reached long before, and the multiplication cannot overflow.
        min(maximum, base * (1 << min(max(failures, 1) - 1, 30)))
    }

    /// The delay to wait after `failures` in a row; `random` in [0, 1] (clamped) picks the share.
    public func delay(afterFailures failures: Int, random: Double) -> Duration {
        let r = min(max(random, 0), 1)
        let ceiling = ceiling(afterFailures: failures)
        switch jitter {
        case .full: return ceiling * r
        case .equal: return ceiling * (0.5 + 0.5 * r)
        }
    }
}
