import EventLoops
import Locking

/// The multi handles of one client, one per loop that sent through it. Loop closures capture this,
/// never the client, so a client is never freed on one of its loops.
final class CurlMultiRegistry: Sendable {
    let maxConnectionsPerHost: Int
    let maxTotalConnections: Int
    private let state = Lock<State>(State())

    private struct State {
        var made: [Weak] = []
        var closed = false
    }

    private struct Weak: @unchecked Sendable { weak var multi: CurlMulti? }

    init(maxConnectionsPerHost: Int, maxTotalConnections: Int) {
        self.maxConnectionsPerHost = maxConnectionsPerHost
        self.maxTotalConnections = maxTotalConnections
    }

    /// This loop's multi handle for the client (on the loop's thread).
    func multi(on loop: EventLoop) -> CurlMulti {
        loop.local(for: ObjectIdentifier(self)) {
            let multi = CurlMulti(loop: loop, maxConnectionsPerHost: maxConnectionsPerHost, maxTotalConnections: maxTotalConnections)
            let closed = state.withLock { s -> Bool in
                s.made.append(Weak(multi: multi))
                return s.closed
            }
            if closed { multi.close() }
            return multi
        }
    }

    /// Closes every multi handle, each on its own loop.
    func closeAll() {
        let made = state.withLock { s -> [Weak] in
            s.closed = true
            return s.made
        }
        for entry in made {
            guard let multi = entry.multi else { continue }
            if multi.loop.inLoop { multi.close() } else { multi.loop.execute { [entry] in entry.multi?.close() } }
        }
    }
}
