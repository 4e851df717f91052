import Locking

/// What one multi knows of its `https://` connections to one host, to hand calls to HTTP/2 streams.
///
/// libcurl 7.88 skips a connection still being set up when it looks for one to reuse (it is marked
/// "to close" until then), so while a new connection's handshake runs, every call that finds the other
/// connections' streams all in use opens a connection of its own, whatever CURLOPT_PIPEWAIT says: a burst
/// over the stream limit cost one TLS handshake per overflowing call, and connections used once. Here a
/// call goes to curl only when a stream is free on a ready connection, or as the one call that opens the
/// next connection (within the host's connection limit); the others wait, first come first served, for a
/// stream to free up or for that connection to be ready, and never fail for it.
struct HostStreams {
    /// Calls to the host given to curl and not finished.
    private(set) var admitted = 0
    /// The sockets of this host's connections that are ready (a call's request went out on them).
    private(set) var ready: Set<Int32> = []
    /// The call given to curl to open a connection beyond the ready ones, until its connection is ready or it ends.
    private(set) var opener: ObjectIdentifier?
    /// False once an answer came over HTTP/1.x: one call per connection, and curl's own connection limit and
    /// queue apply (waiting here would run the calls one at a time).
    private(set) var multiplexed = true
    /// Calls waiting for a stream.
    private(set) var waiting = FIFOQueue<CurlTransfer>()

    /// Whether a call may go to curl now; if so, it is counted (and may be the opener of a new connection).
    mutating func admit(_ call: ObjectIdentifier, streamsPerConnection: Int, maxConnections: Int) -> Bool {
        if !multiplexed || admitted < ready.count * streamsPerConnection {
            admitted += 1
            return true
        }
        guard opener == nil, ready.count < maxConnections else { return false }
        opener = call
        admitted += 1
        return true
    }

    mutating func wait(_ transfer: CurlTransfer) { waiting.append(transfer) }

    /// The call waiting longest, if it may go to curl now (counted as `admit` does).
    mutating func nextAdmitted(streamsPerConnection: Int, maxConnections: Int) -> CurlTransfer? {
        guard let first = waiting.first,
              admit(ObjectIdentifier(first), streamsPerConnection: streamsPerConnection, maxConnections: maxConnections)
        else { return nil }
        return waiting.popFirst()
    }

    /// Takes a waiting call out (its caller gave up); false when it was not waiting.
    mutating func removeWaiting(_ transfer: CurlTransfer) -> Bool {
        waiting.remove(firstWhere: { $0 === transfer }) != nil
    }

    /// The first waiting call that `matches`, taken out (its timeout passed).
    mutating func takeWaiting(where matches: (CurlTransfer) -> Bool) -> CurlTransfer? {
        waiting.remove(firstWhere: matches)
    }

    /// Every waiting call, taken out (the multi closes).
    mutating func takeAllWaiting() -> [CurlTransfer] {
        var all: [CurlTransfer] = []
        while let next = waiting.popFirst() { all.append(next) }
        return all
    }

    /// `call`'s request is about to go out on the connection of `socket`; `opened`: curl made that connection for it.
    mutating func connected(_ call: ObjectIdentifier, socket: Int32, opened: Bool) {
        if opened, socket >= 0 { ready.insert(socket) }
        if opener == call { opener = nil }
    }

    /// `call` ended; `http1`: its answer came over HTTP/1.x.
    mutating func finished(_ call: ObjectIdentifier, http1: Bool) {
        admitted = max(0, admitted - 1)
        if opener == call { opener = nil }
        if http1 { multiplexed = false }
    }

    /// curl closed `socket`: if it was one of this host's connections, its streams are gone.
    mutating func closed(_ socket: Int32) { ready.remove(socket) }
}
