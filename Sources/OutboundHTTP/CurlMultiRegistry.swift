import EventLoops
import Locking

/// The multi handles of one client, one per loop that sent through it. Loop closures capture this,
/// never the client, so a client is never freed on one of its loops.
final class CurlMultiRegistry: Sendable {
    let maxConnectionsPerHost: Int
    let maxTotalConnections: Int
    /// Where each loop keeps this client's multi handle.
    private let key = LoopLocalKey()
    private let state = Lock<State>(State())

    private struct State {
        var made: [Weak] = []
        var closed = false
    }

    // Unchecked: a CurlMulti is used only on its loop's thread; elsewhere `closeAll` reads just its `loop` to go there.
    private struct Weak: @unchecked Sendable { weak var multi: CurlMulti? }

    init(maxConnectionsPerHost: Int, maxTotalConnections: Int) {
        self.maxConnectionsPerHost = maxConnectionsPerHost
        self.maxTotalConnections = maxTotalConnections
    }

    /// This loop's multi handle for the client (on the loop's thread).
    func multi(on loop: EventLoop) -> CurlMulti {
        var madeClosed = false
        let multi = loop.local(for: key) {
            let multi = CurlMulti(loop: loop, maxConnectionsPerHost: maxConnectionsPerHost, maxTotalConnections: maxTotalConnections)
            madeClosed = state.withLock { s -> Bool in
                s.made.append(Weak(multi: multi))
                return s.closed
            }
            if madeClosed { multi.close() }
            return multi
        }
        // Made after `closeAll`: it fails its one call with `shutDown`, and the loop does not keep it.
        if madeClosed { loop.removeLocal(for: key) }
        return multi
    }

    /// Closes every multi handle, each on its own loop, and frees it there.
    func closeAll() {
        let made = state.withLock { s -> [Weak] in
            s.closed = true
            return s.made
        }
        let key = self.key
        for entry in made {
            guard let multi = entry.multi else { continue }
            if multi.loop.inLoop {
                multi.close()
                multi.loop.removeLocal(for: key)
            } else {
                multi.loop.execute { [entry] in
                    entry.multi?.close()
                    EventLoop.current?.removeLocal(for: key)
                }
            }
        }
    }
}
