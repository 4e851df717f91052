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
        var made: [LoopBound<WeakMulti>] = []
        var closed = false
    }

    /// A multi handle the registry does not keep alive: its loop owns it (loop-local storage).
    private struct WeakMulti { weak var multi: CurlMulti? }

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
                s.made.append(LoopBound(WeakMulti(multi: multi), loop: loop))
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
        let made = state.withLock { s -> [LoopBound<WeakMulti>] in
            s.closed = true
            return s.made
        }
        let key = self.key
        for entry in made {
            if entry.loop.inLoop {
                Self.close(entry, key: key)
            } else {
                entry.loop.execute { Self.close(entry, key: key) }
            }
        }
    }

    /// On the entry's loop: closes its multi handle, if the loop still has it, and lets the loop free it.
    private static func close(_ entry: LoopBound<WeakMulti>, key: LoopLocalKey) {
        guard let multi = entry.value.multi else { return }
        multi.close()
        entry.loop.removeLocal(for: key)
    }
}
