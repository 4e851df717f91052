import Foundation
import Locking

/// A clock tests move by hand (token ages, cache expiry, back-off).
public final class TestClock: Sendable {
    private let time: Lock<Date>
    public init(_ start: Date = Date()) { time = Lock(start) }
    public var now: Date { time.withLock { $0 } }
    public func advance(by seconds: TimeInterval) { time.withLock { $0 = $0.addingTimeInterval(seconds) } }
    /// A closure for `now:` parameters.
    public var closure: @Sendable () -> Date { { self.now } }
}
