/// How an `HTTPServer` listens and what it tolerates.
public struct HTTPServerConfiguration: Sendable {
    /// IPv4 address to bind, e.g. "127.0.0.1" or "0.0.0.0".
    public var host: String
    /// TCP port; 0 picks a free one (read it back from `HTTPServer.port`).
    public var port: UInt16
    /// libmicrohttpd worker threads (each runs its own epoll loop).
    public var threads: Int
    /// Bodies larger than this are refused with `oversizedBodyResponse` without being read.
    public var maxBodyBytes: Int
    /// Every request is answered within this many milliseconds; a handler still running then gets `deadlineResponse`.
    public var requestDeadlineMilliseconds: Int
    /// Idle or slow connections (not suspended ones) are closed after this many seconds.
    public var connectionTimeoutSeconds: Int
    public var maxConnections: Int

    public init(host: String = "127.0.0.1", port: UInt16 = 0, threads: Int = 2, maxBodyBytes: Int = 64 * 1024,
                requestDeadlineMilliseconds: Int = 30_000, connectionTimeoutSeconds: Int = 30, maxConnections: Int = 16_000) {
        self.host = host
        self.port = port
        self.threads = threads
        self.maxBodyBytes = maxBodyBytes
        self.requestDeadlineMilliseconds = requestDeadlineMilliseconds
        self.connectionTimeoutSeconds = connectionTimeoutSeconds
        self.maxConnections = maxConnections
    }
}
