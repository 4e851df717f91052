/// A token bucket: holds up to `capacity` tokens, refilled continuously at `ratePerSecond`.
///
/// Pure arithmetic over the times it is given (seconds on any monotonic clock), so tests drive it
/// without sleeping. A clock that steps back is read as no time passing (`refill(onWallClock:)` for one that may).
/// The rate limits take one request's cost at a time; the receipt refresher takes every whole token at once.
public struct TokenBucket: Sendable, Equatable {
    public private(set) var ratePerSecond: Double
    public private(set) var capacity: Double
    /// Tokens available at `updatedAt`.
    public private(set) var tokens: Double
    public private(set) var updatedAt: Double

    /// A full bucket at `now`.
    public init(ratePerSecond: Double, burst: Int, now: Double) {
        self.ratePerSecond = ratePerSecond
        self.capacity = Double(max(1, burst))
        self.tokens = capacity
        self.updatedAt = now
    }

    /// Adds what accrued since the last update, never beyond the capacity.
    public mutating func refill(now: Double) {
        guard now > updatedAt else { return }
        tokens = min(capacity, tokens + (now - updatedAt) * ratePerSecond)
        updatedAt = now
    }

    /// Refills from a wall clock, whose times are dates and may step back: a step back restarts the count from
    /// the earlier time (the tokens held stay), instead of adding nothing until the clock has caught up again.
    public mutating func refill(onWallClock now: Double) {
        refill(now: now)
        updatedAt = now
    }

    /// Takes every whole token held (a hair under a whole one counts: 0.4 s at 5 a second refills 2, not
    /// 1.999… after the float's error), and returns how many; 0 takes nothing. Refill first.
    public mutating func takeWhole() -> Int {
        let whole = Int((tokens + 1e-6).rounded(.down))
        guard whole >= 1 else { return 0 }
        tokens = max(0, tokens - Double(whole))
        return whole
    }

    /// Puts back `count` tokens taken but not used, never beyond the capacity.
    public mutating func giveBack(_ count: Double) {
        tokens = min(capacity, tokens + max(0, count))
    }

    /// Gives the bucket a new rate and size from `now` on (the replica count changed): what accrued until
    /// `now` accrues at the old rate, and the tokens held never exceed the new size.
    public mutating func resize(ratePerSecond: Double, burst: Int, now: Double) {
        refill(now: now)
        self.ratePerSecond = ratePerSecond
        capacity = Double(max(1, burst))
        tokens = min(tokens, capacity)
    }

    /// Seconds from `updatedAt` until `cost` tokens are available (0: available now). A cost above
    /// the capacity counts as the capacity, or it could never be paid.
    public func secondsUntilAvailable(_ cost: Double) -> Double {
        let needed = min(cost, capacity)
        return tokens >= needed ? 0 : (needed - tokens) / ratePerSecond
    }

    /// Takes `cost` tokens (capped at the capacity) if the bucket holds them; refills first.
    /// Returns nil when taken, otherwise the seconds until it could be.
    public mutating func take(_ cost: Double, now: Double) -> Double? {
        refill(now: now)
        let wait = secondsUntilAvailable(cost)
        guard wait == 0 else { return wait }
        tokens -= min(cost, capacity)
        return nil
    }
}
