import CMicroHTTPD
import FoundationEssentials
import Locking

/// Every open connection and since when it has been receiving a request, so that a connection
/// trickling its request in (slowloris) is closed when the receive deadline passes, however often it
/// sends a byte.
///
/// libmicrohttpd offers no call to close a connection from another thread; `shutdown(2)` of its socket
/// does it safely: the daemon's own thread then sees end-of-file, closes the connection and frees it
/// as it would for any client that hung up. The socket number cannot have been reused by then: MHD
/// calls the CLOSED notification (`closed(_:)`, which takes the same lock as `closeOverdue`) before it
/// closes the socket, so a connection still in the table still owns its socket.
final class ConnectionTracker: Sendable {
    /// One open connection; MHD keeps an unretained pointer to it as the connection's socket context.
    final class Connection: Sendable {
        let fd: Int32
        let ip: UInt32
        /// When the connection started waiting for the request it is receiving now; nil while a request
        /// is being handled or answered (the request deadline covers that part).
        private let receivingSince = Lock<ContinuousClock.Instant?>(ContinuousClock.now)
        /// Whether the edge checks have run for the request being received (`LibraryAnswers` reads it).
        /// Only the loop that runs the connection's daemon touches it: no lock, and sound unchecked.
        nonisolated(unsafe) var headChecked = false

        init(fd: Int32, ip: UInt32) {
            self.fd = fd
            self.ip = ip
        }

        /// The request has fully arrived (or has been answered early).
        func received() { receivingSince.withLock { $0 = nil } }
        /// The answer is done: a kept-alive connection starts waiting for its next request.
        func awaitNextRequest() { receivingSince.withLock { $0 = .now } }

        /// True (once) when the connection has been receiving since before `cutoff`.
        func takeOverdue(before cutoff: ContinuousClock.Instant) -> Bool {
            receivingSince.withLock { since in
                guard let start = since, start < cutoff else { return false }
                since = nil
                return true
            }
        }
    }

    private struct Table {
        var open: [UInt: Connection] = [:]
        /// Open connections per IPv4 address (as `in_addr_t`), for the per-IP cap.
        var perIP: [UInt32: Int] = [:]
        var maxTotal = Int.max
        /// 0: no cap.
        var maxPerIP = 0
    }

    private let table = Lock<Table>(Table())
    /// Connections closed because their request did not arrive in time.
    let receiveTimeouts = Lock<Int>(0)

    /// The caps `admits` enforces over every daemon sharing the port.
    func setCaps(total: Int, perIP: Int) {
        table.withLock {
            $0.maxTotal = total
            $0.maxPerIP = perIP
        }
    }

    /// Whether one more connection from `ip` fits under the caps (asked before libmicrohttpd accepts it).
    func admits(ip: UInt32) -> Bool {
        table.withLock { t in
            guard t.open.count < t.maxTotal else { return false }
            return t.maxPerIP == 0 || t.perIP[ip, default: 0] < t.maxPerIP
        }
    }

    func opened(_ key: UInt, fd: Int32, ip: UInt32) -> Connection {
        let connection = Connection(fd: fd, ip: ip)
        table.withLock {
            $0.open[key] = connection
            $0.perIP[ip, default: 0] += 1
        }
        return connection
    }

    func closed(_ key: UInt) {
        table.withLock { t in
            guard let connection = t.open.removeValue(forKey: key) else { return }
            let left = t.perIP[connection.ip, default: 1] - 1
            t.perIP[connection.ip] = left > 0 ? left : nil
        }
    }


    /// Shuts down every connection that has been receiving one request for longer than `limit`.
    @discardableResult
    func closeOverdue(limit: Duration, now: ContinuousClock.Instant = .now) -> Int {
        let cutoff = now - limit
        return table.withLock { table -> Int in
            var closed = 0
            for connection in table.open.values where connection.takeOverdue(before: cutoff) {
                // Under the table's lock: MHD has not yet closed (or reused) this socket number.
                receiveTimeouts.withLock { $0 += 1 }
                shutdown(connection.fd, Int32(SHUT_RDWR))
                closed += 1
            }
            return closed
        }
    }
}
