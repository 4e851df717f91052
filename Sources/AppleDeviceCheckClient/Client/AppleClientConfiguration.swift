import DeviceCheckModel

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
    /// Base URL of App Attest's fraud-metric service (`/v1/attestationData`), without a trailing slash.
    public var appAttestDataBaseURL: String
    /// A PEM bundle of trust anchors for both hosts, in place of the operating system's store; nil: the system's.
    public var caFile: String?

    /// `appAttestDataBaseURL` left out: Apple's data host of the same environment when `baseURL` is one of
    /// Apple's DeviceCheck hosts, otherwise `baseURL` itself (the sandbox serves both paths).
    public init(baseURL: String, timeoutMilliseconds: Int = 5_000, maxInFlight: Int = 1_024, maxConnections: Int = 64,
                initialBackoffMilliseconds: Int = 50, maxBackoffMilliseconds: Int = 1_000, appAttestDataBaseURL: String? = nil,
                caFile: String? = nil) {
        let base = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        self.baseURL = base
        let dataURL = appAttestDataBaseURL ?? AppleEnvironment.allCases.first { $0.baseURL == base }?.appAttestDataBaseURL ?? base
        self.appAttestDataBaseURL = dataURL.hasSuffix("/") ? String(dataURL.dropLast()) : dataURL
        self.timeoutMilliseconds = timeoutMilliseconds
        self.maxInFlight = maxInFlight
        self.maxConnections = maxConnections
        self.initialBackoffMilliseconds = initialBackoffMilliseconds
        self.maxBackoffMilliseconds = maxBackoffMilliseconds
        self.caFile = caFile
    }
}
