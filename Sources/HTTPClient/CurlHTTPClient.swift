import CCurl
import Foundation
import Locking

/// An async HTTP client on libcurl's multi interface.
///
/// One dedicated thread drives every transfer with `curl_multi_socket_action` over epoll; callers
/// suspend on a continuation and hold no thread while they wait, so thousands of calls can be in
/// flight at once, and a wake-up costs in proportion to the sockets that are ready.
public final class CurlHTTPClient: @unchecked Sendable {
    private struct Shared {
        var pending: [CurlTransfer] = []
        var running = true
    }

    // Touched by the transfer thread only.
    private let multi: UnsafeMutableRawPointer
    private let loop = CurlEventLoop()
    private let shared = Lock(Shared())

    /// - Parameters:
    ///   - maxConnectionsPerHost: the most connections opened to one host (HTTP/2 multiplexes within them).
    ///   - maxTotalConnections: the size of the connection cache.
    public init(maxConnectionsPerHost: Int = 64, maxTotalConnections: Int = 256) {
        Self.globalInit
        guard let multi = curl_multi_init() else { fatalError("curl_multi_init failed") }
        self.multi = multi
        twobits_multi_setopt_long(multi, CURLMOPT_MAX_HOST_CONNECTIONS, maxConnectionsPerHost)
        twobits_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, maxTotalConnections)
        twobits_multi_setopt_long(multi, CURLMOPT_PIPELINING, 2) // CURLPIPE_MULTIPLEX
        loop.install(on: multi)
        let t = Thread { [self] in self.run() }
        t.name = "twobits-curl"
        t.stackSize = 1 << 20
        t.start()
    }

    private static let globalInit: Void = { curl_global_init(3) }() // CURL_GLOBAL_ALL

    /// Performs one request. Never throws for an HTTP status: any status is a response.
    public func send(_ request: HTTPClientRequest) async throws(HTTPClientError) -> HTTPClientResponse {
        let result: Result<HTTPClientResponse, HTTPClientError> = await withCheckedContinuation { continuation in
            guard let transfer = CurlTransfer(request: request, completion: { continuation.resume(returning: $0) }) else {
                continuation.resume(returning: .failure(.connectionFailed("curl_easy_init failed")))
                return
            }
            let accepted = shared.withLock { s -> Bool in
                guard s.running else { return false }
                s.pending.append(transfer)
                return true
            }
            if accepted { twobits_eventfd_signal(loop.wake) } else { transfer.finish(.failure(.shutDown)) }
        }
        return try result.get()
    }

    /// Stops the transfer thread; transfers still running fail with `shutDown`.
    public func shutdown() {
        let wasRunning = shared.withLock { s -> Bool in
            defer { s.running = false }
            return s.running
        }
        if wasRunning { twobits_eventfd_signal(loop.wake) }
    }

    private func run() {
        var inFlight: [UnsafeMutableRawPointer: CurlTransfer] = [:]
        var fds = [Int32](repeating: 0, count: 256)
        var flags = [Int32](repeating: 0, count: 256)
        var running: Int32 = 0
        while true {
            let ready = twobits_epoll_wait(loop.epoll, &fds, &flags, Int32(fds.count), loop.waitMilliseconds)
            for i in 0..<Int(max(0, ready)) {
                if fds[i] == loop.wake {
                    twobits_eventfd_drain(loop.wake)
                } else {
                    curl_multi_socket_action(multi, fds[i], flags[i], &running)
                }
            }
            let (incoming, open) = shared.withLock { s -> ([CurlTransfer], Bool) in
                defer { s.pending.removeAll(keepingCapacity: true) }
                return (s.pending, s.running)
            }
            for transfer in incoming {
                transfer.attach()
                inFlight[transfer.easy] = transfer
                curl_multi_add_handle(multi, transfer.easy) // sets curl's timer to 0: started just below
            }
            if !open { break }
            if loop.takeExpiredTimer() { curl_multi_socket_action(multi, -1 /* CURL_SOCKET_TIMEOUT */, 0, &running) }
            var left: Int32 = 0
            while let message = curl_multi_info_read(multi, &left) {
                guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle else { continue }
                let code = twobits_msg_result(message)
                curl_multi_remove_handle(multi, easy)
                inFlight.removeValue(forKey: easy)?.finish(code)
            }
        }
        for (easy, transfer) in inFlight {
            curl_multi_remove_handle(multi, easy)
            transfer.finish(.failure(.shutDown))
        }
        curl_multi_cleanup(multi)
    }
}
