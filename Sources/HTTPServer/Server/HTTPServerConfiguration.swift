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
    /// Idle or slow connections (not suspended ones) are closed after this many seconds without a byte.
    public var connectionTimeoutSeconds: Int
    /// A request's line, headers and body must all arrive within this many milliseconds of the
    /// connection opening (or of the previous answer on a kept-alive connection); otherwise the
    /// connection is closed. Unlike the idle timeout, a byte now and then does not restart it.
    public var receiveTimeoutMilliseconds: Int
    /// Open connections, all clients together; also kept under the process's open-file limit.
    public var maxConnections: Int
    /// Open connections from one IP address; 0 for no cap.
    public var maxConnectionsPerIP: Int
    /// Request line and headers together; more is answered 431.
    public var maxHeaderBytes: Int
    /// Path and query together; more is answered 414.
    public var maxURLBytes: Int
    /// Query parameters; more is answered 400.
    public var maxQueryParameters: Int
    /// How long a loop this server starts waits, on a wake of a few events, for more before serving them;
    /// 0 serves at once (`EventLoop.coalescingMicroseconds` explains the trade).
    public var wakeCoalescingMicroseconds = 0
    /// Whether a client hanging up while its request is handled cancels the handler's task (the connection's
    /// socket is watched meanwhile: one `epoll_ctl` add and delete per request). Off for a server that must
    /// finish what it was asked whoever still listens (the Apple sandbox, as Apple would).
    public var cancelsOnHangUp = true
    /// File descriptors kept free for everything but client connections (database, outgoing calls, logs).
    public var reservedFileDescriptors: Int
    /// Header names (lower case) a request may carry at most once: each decides something (the credential, the
    /// virtual host, the body's type), and with two copies a proxy or log in front may have read the one the
    /// server did not (the last). A repeat, even of the same value, is answered 400.
    public var singleValuedHeaders: Set<String> = ["authorization", "host", "content-type"]

    public init(host: String = "127.0.0.1", port: UInt16 = 0, threads: Int = 2, maxBodyBytes: Int = 64 * 1024,
                requestDeadlineMilliseconds: Int = 30_000, connectionTimeoutSeconds: Int = 30, maxConnections: Int = 16_000,
                receiveTimeoutMilliseconds: Int = 10_000, maxConnectionsPerIP: Int = 0, maxHeaderBytes: Int = 8 * 1024,
                maxURLBytes: Int = 4 * 1024, maxQueryParameters: Int = 100, reservedFileDescriptors: Int = 256) {
        self.host = host
        self.port = port
        self.threads = threads
        self.maxBodyBytes = maxBodyBytes
        self.requestDeadlineMilliseconds = requestDeadlineMilliseconds
        self.connectionTimeoutSeconds = connectionTimeoutSeconds
        self.maxConnections = maxConnections
        self.receiveTimeoutMilliseconds = receiveTimeoutMilliseconds
        self.maxConnectionsPerIP = maxConnectionsPerIP
        self.maxHeaderBytes = maxHeaderBytes
        self.maxURLBytes = maxURLBytes
        self.maxQueryParameters = maxQueryParameters
        self.reservedFileDescriptors = reservedFileDescriptors
    }

    /// libmicrohttpd's per-connection memory: the largest header section we accept plus room for its
    /// bookkeeping, so that our own 431/414 answers (in JSON) come before libmicrohttpd's (in HTML) for
    /// header sections up to about 1.5 times our limit. MHD zeroes the whole pool between requests, so
    /// this is what each kept-alive connection costs in resident memory (16 KiB at the defaults, 32 MB
    /// with 2,048 connections).
    var connectionMemoryBytes: Int { maxHeaderBytes + 8 * 1024 }
}
