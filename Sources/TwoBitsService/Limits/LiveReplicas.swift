import Locking

/// How many replicas serve the deployment now, as the ledger last counted them (PostgreSQL: the presence
/// connections alive; SQLite: always 1), and each replica's share of a limit configured for the whole
/// deployment. Any limiter that holds a deployment-wide total reads `count` and sizes itself with `share`;
/// `RateLimiter` does for `rate_per_second`, `burst` and `apple.max_calls_per_second`.
public final class LiveReplicas: Sendable {
    private let value: Lock<Int>

    /// `initial`: the count until the ledger is first asked (1: one replica takes the whole total).
    public init(_ initial: Int = 1) { value = Lock(max(1, initial)) }

    /// The last count, at least 1.
    public var count: Int { value.withLock { $0 } }

    /// Records a new count (the ledger's answer); below 1 counts as 1 (this replica is alive).
    public func update(_ count: Int) { value.withLock { $0 = max(1, count) } }

    /// This replica's share of a deployment-wide rate: `total / replicas`, exact (a rate needs no rounding).
    public static func share(ofRate total: Double, replicas: Int) -> Double { total / Double(max(1, replicas)) }

    /// This replica's share of a deployment-wide whole number (a burst, a ceiling's burst): `total / replicas`
    /// rounded up, at least 1, so that no replica is left unable to admit anything. The replicas' shares
    /// together may exceed the total by at most `replicas - 1`.
    public static func share(ofCount total: Int, replicas: Int) -> Int {
        let n = max(1, replicas)
        return max(1, (total + n - 1) / n)
    }
}
