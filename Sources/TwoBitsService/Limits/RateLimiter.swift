public import FoundationEssentials
import Locking

/// Per-client token buckets and one global bucket, checked together: a request is admitted only
/// when both hold its cost, and then takes from both; a refused request takes nothing.
public final class RateLimiter: Sendable {
    /// Which bucket refused.
    public enum Scope: String, Sendable { case client, global }

    public enum Decision: Sendable, Equatable {
        case admitted
        /// `retryAfterSeconds`: whole seconds until the refusing bucket holds the cost (at least 1).
        case refused(Scope, retryAfterSeconds: Int)
    }

    /// A client's limit.
    public struct Limit: Sendable, Equatable {
        public let ratePerSecond: Double
        public let burst: Int
        public init(ratePerSecond: Double, burst: Int) {
            self.ratePerSecond = ratePerSecond
            self.burst = burst
        }
    }

    private struct State {
        var clients: [String: TokenBucket] = [:]
        var global: TokenBucket?
    }

    private let limits: [String: Limit]
    private let state: Lock<State>
    private let now: @Sendable () -> Double

    /// - Parameters:
    ///   - limits: each client's limit, by name; a client not listed is never limited.
    ///   - globalPerSecond: the shared ceiling (its burst is one second's worth); nil for none.
    ///   - now: seconds on a monotonic clock (tests pass their own).
    public init(limits: [String: Limit], globalPerSecond: Int?,
                now: @escaping @Sendable () -> Double = { ProcessInfo.processInfo.systemUptime }) {
        self.limits = limits
        self.now = now
        let start = now()
        state = Lock(State(global: globalPerSecond.map { TokenBucket(ratePerSecond: Double($0), burst: $0, now: start) }))
    }

    /// Admits one request of `client` that takes 1 from the client's bucket and `globalCost` from the global one.
    public func admit(client: String, globalCost: Int = 1) -> Decision {
        let time = now()
        let limit = limits[client]
        return state.withLock { s in
            var bucket = s.clients[client] ?? limit.map { TokenBucket(ratePerSecond: $0.ratePerSecond, burst: $0.burst, now: time) }
            bucket?.refill(now: time)
            s.global?.refill(now: time)
            if let wait = bucket.map({ $0.secondsUntilAvailable(1) }), wait > 0 {
                s.clients[client] = bucket
                return .refused(.client, retryAfterSeconds: Self.wholeSeconds(wait))
            }
            if let wait = s.global.map({ $0.secondsUntilAvailable(Double(globalCost)) }), wait > 0 {
                s.clients[client] = bucket
                return .refused(.global, retryAfterSeconds: Self.wholeSeconds(wait))
            }
            _ = bucket?.take(1, now: time)
            _ = s.global?.take(Double(globalCost), now: time)
            s.clients[client] = bucket
            return .admitted
        }
    }

    /// Rounds up, so a client that waits that long finds a token; never 0.
    static func wholeSeconds(_ seconds: Double) -> Int {
        max(1, Int(seconds.rounded(.up)))
    }
}
