import DeviceCheckModel

/// The value of every configuration field left out of the file, declared once: the parser reads them
/// here, and docs/configuration.md documents the same numbers.
public enum ServiceDefaults {
    public static let listen = "127.0.0.1:8080"
    public static let database = "twobits.sqlite"

    /// PostgreSQL's connections: `size` for transactions, each serving one ledger call at a time; `pipelines`
    /// for the one-statement calls, each carrying up to 32 of them per round trip.
    public enum DatabasePool {
        public static let size = 8
        public static let pipelines = 2
        public static let waitMilliseconds = 2_000
    }

    public enum Apple {
        public static let environment = AppleEnvironment.production.rawValue
        public static let timeoutMilliseconds = 5_000
        public static let maxInFlight = 1_024
        public static let maxConnections = 64
    }

    public enum Client {
        /// `burst` when left out: one second's worth of `rate_per_second` (at least 1).
        public static func burst(ratePerSecond: Double?) -> Int { max(1, Int((ratePerSecond ?? 1).rounded(.up))) }
    }

    public enum Server {
        public static let threads = 2
        /// The request deadline is at least this, and at least 3 × `apple.timeout_ms`.
        public static let minimumRequestDeadlineMilliseconds = 15_000
        public static let shutdownGraceMilliseconds = 10_000
        public static let receiveTimeoutMilliseconds = 10_000
        public static let maxConnections = 16_000
        public static let maxConnectionsPerIP = 1_024
        /// `server.wake_coalescing_us`: a loop woken for one to three events waits this long for more, so one
        /// wake serves several, while that pays (`WakeCoalescing`). Why 1,000: measured against a fixed 200 µs and
        /// 2,000 µs in Benchmarks/HISTORY.md, 2026-11-26, 09:20-11:15.
        public static let wakeCoalescingMicroseconds = 1_000

        /// `server.request_deadline_ms` when left out: room for the three Apple calls a route can make.
        public static func requestDeadlineMilliseconds(appleTimeoutMilliseconds: Int) -> Int {
            max(minimumRequestDeadlineMilliseconds, 3 * appleTimeoutMilliseconds)
        }
    }

    public enum Bits {
        public static let role = "unused"
        public static let banAt = 3
    }

    public enum Tokens {
        public static let issuer = "twobits"
        /// Only for the disabled settings; an enabled `tokens` section must name its audience.
        public static let audience = "main-api"
        public static let ttlSeconds = 900
        public static let limitedUseTTLSeconds = 300
        public static let keysDirectory = "keys"
        public static let reuseWindowSeconds = 3_600
    }
}
