import CMicroHTTPD
import Foundation
import Locking

/// An HTTP/1.1 server on libmicrohttpd that runs async Swift handlers.
///
/// libmicrohttpd parses HTTP on a few epoll threads. When a request is complete the connection is
/// suspended and a Swift task computes the answer; the connection is then resumed and the answer
/// queued. An awaiting request therefore holds no thread, and every request has a deadline because a
/// suspended connection never times out by itself.
public final class HTTPServer: @unchecked Sendable {
    public typealias Handler = @Sendable (HTTPRequest) async -> HTTPResponse

    public let configuration: HTTPServerConfiguration
    let handler: Handler
    let oversizedBody: @Sendable (HTTPRequest) -> HTTPResponse
    let deadlineExpired: @Sendable (HTTPRequest) -> HTTPResponse
    let shuttingDown: @Sendable (HTTPRequest) -> HTTPResponse
    let onAnswered: (@Sendable (HTTPRequest, HTTPResponse, Duration) -> Void)?
    let refused: @Sendable (HTTPRefusal, HTTPRequest) -> HTTPResponse
    let headCheck: (@Sendable (HTTPRequest) -> HTTPResponse?)?
    let onReceiveTimeouts: (@Sendable (Int) -> Void)?
    /// Open connections and their receive deadlines.
    let connections = ConnectionTracker()

    private let state = Lock<State>(State())
    /// libmicrohttpd's daemon handle; its API is thread-safe.
    private struct Daemon: @unchecked Sendable { let pointer: OpaquePointer }
    private struct State {
        var daemon: Daemon?
        var port: UInt16 = 0
        var limits = Limits(openFiles: OpenFileLimit(soft: 0, hard: 0), maxConnections: 0)
    }

    /// The connection caps in force, after the open-file limit was raised and applied.
    public struct Limits: Sendable, Equatable {
        public let openFiles: OpenFileLimit
        /// The global connection cap: the configured one, lowered to fit under the open-file limit.
        public let maxConnections: Int
    }
    /// Requests handed to Swift and not yet answered, with their deadlines, so the deadline scanner
    /// and shutdown can answer them.
    let pending = Lock<[ObjectIdentifier: PendingRequest]>([:])
    private let scanner = Lock<Task<Void, Never>?>(nil)

    struct PendingRequest: Sendable {
        let context: RequestContext
        let request: HTTPRequest
        let deadline: ContinuousClock.Instant
        /// The handler's task, cancelled when the deadline answers first so its work stops.
        var task: Task<Void, Never>?
    }

    /// - Parameters:
    ///   - oversizedBody: the answer when a body is over `maxBodyBytes` (the request carries no body).
    ///   - deadlineExpired: the answer when a handler has not finished within the deadline.
    ///   - shuttingDown: the answer to requests still running when the shutdown grace period ends.
    ///   - refused: the answer to a request the edge refuses (framing, NUL bytes, sizes); it is sent
    ///     with `Connection: close`. The default is the JSON error envelope.
    ///   - headCheck: decides from the request line and headers alone (the request has no body yet):
    ///     an answer refuses the request before any body byte is read, nil lets it through.
    ///   - onAnswered: called once per request with the answer actually sent (for logs and metrics).
    ///   - onReceiveTimeouts: called with how many connections a receive scan just closed (slow clients).
    public init(configuration: HTTPServerConfiguration,
                oversizedBody: @escaping @Sendable (HTTPRequest) -> HTTPResponse = { _ in .text(413, "Payload Too Large") },
                deadlineExpired: @escaping @Sendable (HTTPRequest) -> HTTPResponse = { _ in .text(503, "Service Unavailable") },
                shuttingDown: @escaping @Sendable (HTTPRequest) -> HTTPResponse = { _ in .text(503, "Service Unavailable") },
                refused: @escaping @Sendable (HTTPRefusal, HTTPRequest) -> HTTPResponse = { refusal, _ in refusal.response },
                headCheck: (@Sendable (HTTPRequest) -> HTTPResponse?)? = nil,
                onAnswered: (@Sendable (HTTPRequest, HTTPResponse, Duration) -> Void)? = nil,
                onReceiveTimeouts: (@Sendable (Int) -> Void)? = nil,
                handler: @escaping Handler) {
        self.onReceiveTimeouts = onReceiveTimeouts
        self.refused = refused
        self.headCheck = headCheck
        self.configuration = configuration
        self.handler = handler
        self.onAnswered = onAnswered
        self.oversizedBody = oversizedBody
        self.deadlineExpired = deadlineExpired
        self.shuttingDown = shuttingDown
    }

    /// The bound port (useful when the configuration asked for port 0).
    public var port: UInt16 { state.withLock { $0.port } }

    /// The connection caps in force (valid after `start()`).
    public var limits: Limits { state.withLock { $0.limits } }

    /// Raises the open-file limit, binds and starts serving.
    public func start() throws(HTTPServerError) {
        var probe = in_addr()
        guard inet_pton(AF_INET, configuration.host, &probe) == 1 else { throw .invalidAddress(configuration.host) }
        let openFiles = OpenFileLimit.raiseToHard()
        // Past the file limit accept() fails and nobody gets in, health checks included: stay under it.
        let maxConnections = max(1, min(configuration.maxConnections, openFiles.soft - configuration.reservedFileDescriptors))
        let flags = twobits_mhd_async_flags()
        let me = Unmanaged.passUnretained(self).toOpaque()
        let limits = twobits_mhd_limits(
            thread_pool_size: UInt32(max(1, configuration.threads)), connection_limit: UInt32(maxConnections),
            per_ip_connection_limit: UInt32(max(0, configuration.maxConnectionsPerIP)),
            connection_timeout_s: UInt32(configuration.connectionTimeoutSeconds), memory_limit: configuration.connectionMemoryBytes)
        let daemon = twobits_mhd_start(
            flags, configuration.host, configuration.port, accessHandler, me, completedHandler, me,
            requestLineHandler, connectionNotifier, me, limits)
        guard let daemon else { throw .cannotListen(host: configuration.host, port: configuration.port) }
        let bound = twobits_mhd_bound_port(daemon)
        state.withLock {
            $0.daemon = Daemon(pointer: daemon)
            $0.port = bound
            $0.limits = Limits(openFiles: openFiles, maxConnections: maxConnections)
        }
        // One task enforces every deadline, instead of a timer per request.
        let shortest = min(configuration.requestDeadlineMilliseconds, configuration.receiveTimeoutMilliseconds)
        let tick = Duration.milliseconds(max(5, min(50, shortest / 10)))
        let receiveTimeout = Duration.milliseconds(configuration.receiveTimeoutMilliseconds)
        // Every open connection is visited per receive scan: at most every 500 ms (a twentieth of the deadline).
        let receiveScanEvery = Duration.milliseconds(max(10, min(500, configuration.receiveTimeoutMilliseconds / 20)))
        scanner.withLock { $0 = Task { [weak self] in
            var lastReceiveScan = ContinuousClock.now
            while !Task.isCancelled {
                try? await Task.sleep(for: tick)
                self?.expireOverdueRequests()
                if ContinuousClock.now - lastReceiveScan >= receiveScanEvery {
                    lastReceiveScan = .now
                    if let self, case let closed = self.connections.closeOverdue(limit: receiveTimeout), closed > 0 {
                        self.onReceiveTimeouts?(closed)
                    }
                }
            }
        } }
    }

    /// Connections closed so far because their request did not arrive within the receive deadline.
    public var receiveTimeouts: Int { connections.receiveTimeouts.withLock { $0 } }

    /// Answers every request whose deadline has passed with `deadlineExpired`.
    func expireOverdueRequests() {
        let now = ContinuousClock.now
        let overdue = pending.withLock { p -> [PendingRequest] in
            let late = p.filter { $0.value.deadline <= now }
            for key in late.keys { p.removeValue(forKey: key) }
            return Array(late.values)
        }
        for entry in overdue {
            // Answer first: a cancelled handler returns at once, and its answer must not win.
            answer(entry.request, with: deadlineExpired(entry.request), context: entry.context)
            entry.task?.cancel()
        }
    }

    /// Number of requests being computed right now.
    public var requestsInFlight: Int { pending.withLock { $0.count } }

    /// Stops accepting connections, lets running requests finish for up to `graceMilliseconds`, answers
    /// the rest with `shuttingDown`, resumes every suspended connection, and stops the daemon.
    public func shutdown(graceMilliseconds: Int = 5_000) async {
        guard let daemon = state.withLock({ s -> Daemon? in defer { s.daemon = nil }; return s.daemon })?.pointer else { return }
        let listenSocket = MHD_quiesce_daemon(daemon)
        let deadline = ContinuousClock.now + .milliseconds(graceMilliseconds)
        while requestsInFlight > 0, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(10))
        }
        scanner.withLock { $0?.cancel() }
        let leftovers = pending.withLock { p in Array(p.values) }
        for entry in leftovers { answer(entry.request, with: shuttingDown(entry.request), context: entry.context) }
        for leftover in leftovers { leftover.task?.cancel() }
        // Give the daemon threads a moment to write the answers of connections just resumed.
        try? await Task.sleep(for: .milliseconds(leftovers.isEmpty ? 20 : 200))
        MHD_stop_daemon(daemon)
        // After quiesce the listening socket is ours to close, and only once the daemon has stopped.
        if listenSocket >= 0 { close(listenSocket) }
    }

    /// Runs the handler for a suspended connection; the deadline scanner answers it if it is too slow.
    func dispatch(_ request: HTTPRequest, context: RequestContext) {
        let key = ObjectIdentifier(context)
        let deadline = ContinuousClock.now + .milliseconds(configuration.requestDeadlineMilliseconds)
        pending.withLock { $0[key] = PendingRequest(context: context, request: request, deadline: deadline) }
        let handler = self.handler
        let task = Task {
            let response = await handler(request)
            self.pending.withLock { _ = $0.removeValue(forKey: key) }
            self.answer(request, with: response, context: context)
        }
        // The entry may already be gone: the deadline answered before the handle was stored (cancel now),
        // or the handler finished (cancelling a finished task does nothing).
        let gone = pending.withLock { p -> Bool in
            guard p[key] != nil else { return true }
            p[key]?.task = task
            return false
        }
        if gone { task.cancel() }
    }

    /// Delivers the first answer for a suspended request; later ones (a handler finishing after its
    /// deadline) are dropped, so logs and metrics see exactly what the client got.
    func answer(_ request: HTTPRequest, with response: HTTPResponse, context: RequestContext) {
        if context.finish(response) { onAnswered?(request, response, ContinuousClock.now - context.started) }
    }
}
