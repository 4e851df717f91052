/// How the Apple client reaches Apple and how patient it is.
public struct AppleClientConfiguration: Sendable {
    /// Base URL without a trailing slash: Apple's production or development host, or the sandbox.
    public var baseURL: String
    /// The deadline of one logical call, retries and queueing included.
    public var timeoutMilliseconds: Int
    /// At most this many calls talk to Apple at once; more wait in a queue until the deadline.
    public var maxInFlight: Int
    /// At most this many TCP connections to the Apple host (HTTP/2 multiplexes calls within them).
    public var maxConnections: Int
    /// First retry delay; doubles each attempt up to `maxBackoffMilliseconds`, with full jitter.
    public var initialBackoffMilliseconds: Int
    public var maxBackoffMilliseconds: Int

    public init(baseURL: String, timeoutMilliseconds: Int = 5_000, maxInFlight: Int = 1_024, maxConnections: Int = 64,
                initialBackoffMilliseconds: Int = 50, maxBackoffMilliseconds: Int = 1_000) {
        self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        self.timeoutMilliseconds = timeoutMilliseconds
        self.maxInFlight = maxInFlight
        self.maxConnections = maxConnections
        self.initialBackoffMilliseconds = initialBackoffMilliseconds
        self.maxBackoffMilliseconds = maxBackoffMilliseconds
    }
}
