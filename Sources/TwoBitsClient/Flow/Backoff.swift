#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Exponential back-off with jitter after Apple's `serverUnavailable`: the n-th failure in a row waits
/// `base · 2^(n-1)` capped at `maximum`, of which a random half ("equal jitter"), so that devices throttled
/// together do not come back together.
///
/// The client keeps its own rather than the server's `Mechanisms.ExponentialBackoff`: that target depends on
/// `Locking` (a pthread mutex over glibc's `CEventLoop`), which an iOS app cannot build, and splitting a
/// dependency-free target off for one formula would add a second TwoBits module to every app's build and to
/// the library product's public surface. Its times are wall-clock dates (an app is suspended), the server's are
/// durations; the formula is the server's equal jitter.
struct Backoff {
    let base: TimeInterval
    let maximum: TimeInterval
    private(set) var failures = 0
    private(set) var until: Date?

    init(base: TimeInterval, maximum: TimeInterval) {
        self.base = base
        self.maximum = maximum
    }

    /// Whether App Attest must not be asked at `now`.
    func isWaiting(now: Date) -> Bool {
        guard let until else { return false }
        return now < until
    }

    /// Records one more failure at `now`; `random` is in [0, 1).
    mutating func fail(now: Date, random: Double) {
        failures += 1
        let delay = min(maximum, base * Double(1 << min(failures - 1, 30)))
        until = now.addingTimeInterval(delay / 2 + delay / 2 * random)
    }

    mutating func succeed() {
        failures = 0
        until = nil
    }
}
