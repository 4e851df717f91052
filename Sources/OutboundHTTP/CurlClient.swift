import CCurl
import EventLoops
import FoundationEssentials
import Locking

/// An async HTTP client on libcurl's multi interface.
///
/// A call made on an event loop runs on that loop's own multi handle, its sockets in the loop's epoll
/// set: the request that made the call is resumed on the same thread, with no hop (docs/architecture.md).
/// A call made anywhere else (a command, a test) runs on the client's own loop thread, started on first
/// use. Callers suspend on a continuation and hold no thread while they wait; a cancelled caller's
/// transfer is taken out of curl at once.
public final class CurlClient: Sendable {
    private let multis: CurlMultiRegistry
    /// The trust anchors of every `https://` call, in place of the system's store; nil: the system's.
    public let caFile: String?
    /// Told, when a call ends, how many connections curl opened for it (TCP, and TLS for `https://`), with the
    /// call's `scheme://host:port`.
    private let connectionsOpened: (@Sendable (_ origin: String, _ count: Int) -> Void)?
    private let ownLoop = Lock<OwnLoop>(OwnLoop())

    private struct OwnLoop {
        var loop: EventLoop?
        var running = true
    }

    /// - Parameters:
    ///   - maxConnectionsPerHost: the most connections one loop opens to one host (HTTP/2 multiplexes within them).
    ///   - maxTotalConnections: the size of each loop's connection cache.
    ///   - caFile: a PEM bundle that replaces the operating system's trust store for TLS (CURLOPT_CAINFO);
    ///     verification itself is always on.
    ///   - connectionsOpened: told of the connections each call opened (for a count of handshakes); on the call's loop.
    public init(maxConnectionsPerHost: Int = 64, maxTotalConnections: Int = 256, caFile: String? = nil,
                connectionsOpened: (@Sendable (_ origin: String, _ count: Int) -> Void)? = nil) {
        Self.globalInit
        self.caFile = caFile
        self.connectionsOpened = connectionsOpened
        multis = CurlMultiRegistry(maxConnectionsPerHost: maxConnectionsPerHost, maxTotalConnections: maxTotalConnections)
    }

    deinit { shutdown() }

    private static let globalInit: Void = { curl_global_init(3) }() // CURL_GLOBAL_ALL

    /// Performs one request. Never throws for an HTTP status: any status is a response.
    public func send(_ request: OutboundRequest) async throws(OutboundError) -> OutboundResponse {
        if Task.isCancelled { throw .cancelled }
        guard let loop = EventLoop.current ?? sharedLoop() else { throw .shutDown }
        guard let transfer = CurlTransfer(request: request, caFile: caFile) else { throw .connectionFailed("curl_easy_init failed") }
        transfer.connectionsOpened = connectionsOpened
        let multis = self.multis
        let result: Result<OutboundResponse, OutboundError> = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                transfer.completion = { continuation.resume(returning: $0) }
                if loop.inLoop {
                    multis.multi(on: loop).add(transfer)
                } else {
                    loop.execute { multis.multi(on: loop).add(transfer) }
                }
            }
        } onCancel: {
            // Always through the loop, so it runs after the transfer was added (or finds it marked).
            loop.execute { transfer.cancel() }
        }
        return try result.get()
    }

    /// Fails the transfers still running with `shutDown` and stops the client's own loop. Calls on an
    /// event loop after this fail with `shutDown` too.
    public func shutdown() {
        let loop = ownLoop.withLock { own -> EventLoop? in
            own.running = false
            defer { own.loop = nil }
            return own.loop
        }
        multis.closeAll()
        loop?.stop()
    }

    /// The sockets the client's own loop watches, and whether curl wants each now (for tests).
    func socketRegistrations() async -> [CurlMulti.SocketRegistration] {
        guard let loop = sharedLoop() else { return [] }
        let multis = self.multis
        return await loop.submit { multis.multi(on: loop).registrations }
    }

    private func sharedLoop() -> EventLoop? {
        ownLoop.withLock { own -> EventLoop? in
            guard own.running else { return nil }
            if own.loop == nil { own.loop = EventLoop(name: "twobits-curl") }
            return own.loop
        }
    }
}
