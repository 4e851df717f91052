public import FoundationEssentials
import Locking
import Mechanisms

/// Per-client token buckets and one global bucket, checked together: a request is admitted only
/// when both hold its cost, and then takes from both; a refused request takes nothing. The limits are
/// the deployment's: each bucket holds this replica's share (`LiveReplicas`).
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
        /// The replica count the buckets are sized for.
        var replicas: Int
    }

    private let limits: [String: Limit]
    private let globalPerSecond: Int?
    private let replicas: LiveReplicas
    private let state: Lock<State>
    private let now: @Sendable () -> Double

    /// - Parameters:
    ///   - limits: each client's limit, by name, for the whole deployment; a client not listed is never limited.
    ///   - globalPerSecond: the shared ceiling for the whole deployment (its burst is one second's worth); nil for none.
    ///   - replicas: the live replica count; each bucket holds this replica's share of its total
    ///     (`LiveReplicas.share`), resized at the first request after the count changes.
    ///   - now: seconds on a monotonic clock (tests pass their own).
    public init(limits: [String: Limit], globalPerSecond: Int?, replicas: LiveReplicas = LiveReplicas(),
                now: @escaping @Sendable () -> Double = { ProcessInfo.processInfo.systemUptime }) {
        self.limits = limits
        self.globalPerSecond = globalPerSecond
        self.replicas = replicas
        self.now = now
        let start = now()
        let count = replicas.count
        state = Lock(State(global: globalPerSecond.map { Self.globalBucket($0, replicas: count, now: start) }, replicas: count))
    }

    /// Admits one request of `client` that takes 1 from the client's bucket and `globalCost` from the global one.
    public func admit(client: String, globalCost: Int = 1) -> Decision {
        let time = now()
        let limit = limits[client]
        let count = replicas.count
        return state.withLock { s in
            if s.replicas != count { resize(&s, replicas: count, now: time) }
            var bucket = s.clients[client] ?? limit.map { Self.clientBucket($0, replicas: count, now: time) }
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

    /// Gives every bucket this replica's share of its total for `replicas` live replicas.
    private func resize(_ s: inout State, replicas: Int, now: Double) {
        for name in Array(s.clients.keys) {
            guard let limit = limits[name] else { continue }
            s.clients[name]?.resize(ratePerSecond: LiveReplicas.share(ofRate: limit.ratePerSecond, replicas: replicas),
                                    burst: LiveReplicas.share(ofCount: limit.burst, replicas: replicas), now: now)
        }
        if let total = globalPerSecond {
            s.global?.resize(ratePerSecond: LiveReplicas.share(ofRate: Double(total), replicas: replicas),
                             burst: LiveReplicas.share(ofCount: total, replicas: replicas), now: now)
        }
        s.replicas = replicas
    }

    /// A full bucket holding this replica's share of a client's limit.
    private static func clientBucket(_ limit: Limit, replicas: Int, now: Double) -> TokenBucket {
        TokenBucket(ratePerSecond: LiveReplicas.share(ofRate: limit.ratePerSecond, replicas: replicas),
                    burst: LiveReplicas.share(ofCount: limit.burst, replicas: replicas), now: now)
    }

    /// A full bucket holding this replica's share of the global ceiling (a burst of one second's worth).
    private static func globalBucket(_ total: Int, replicas: Int, now: Double) -> TokenBucket {
        TokenBucket(ratePerSecond: LiveReplicas.share(ofRate: Double(total), replicas: replicas),
                    burst: LiveReplicas.share(ofCount: total, replicas: replicas), now: now)
    }

    /// Rounds up, so a client that waits that long finds a token; never 0.
    static func wholeSeconds(_ seconds: Double) -> Int {
        max(1, Int(seconds.rounded(.up)))
    }
}
