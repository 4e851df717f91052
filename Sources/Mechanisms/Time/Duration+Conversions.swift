/// The numbers the C calls, the metrics and the logs take for a `Duration`, computed from its components in one
/// place (a semaphore's or a timer's nanoseconds, a deadline's milliseconds left, a latency in seconds).
extension Duration {
    /// Whole nanoseconds, the fraction truncated toward zero (timers and semaphore waits).
    public var wholeNanoseconds: Int {
        Int(components.seconds) * 1_000_000_000 + Int(components.attoseconds / 1_000_000_000)
    }

    /// Whole milliseconds, the fraction truncated toward zero (what is left of a deadline, for curl).
    public var wholeMilliseconds: Int {
        Int(components.seconds) * 1_000 + Int(components.attoseconds / 1_000_000_000_000_000)
    }

    /// Seconds, as a `Double` (latency histograms).
    public var inSeconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }

    /// Milliseconds, as a `Double` (the access log's `duration_ms`).
    public var inMilliseconds: Double { Double(components.seconds) * 1_000 + Double(components.attoseconds) / 1e15 }
}
