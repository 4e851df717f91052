import CCurl
import CCurlShims
import EventLoops

/// One libcurl multi handle on one event loop: curl's sockets sit in the loop's epoll set
/// (`CURLMOPT_SOCKETFUNCTION`) and its timeout is a loop timer (`CURLMOPT_TIMERFUNCTION`), so a transfer
/// started on a loop runs, and completes, on that loop's thread. Touched only on that thread.
///
/// A connection's socket stays in the epoll set while the connection waits in curl's cache: curl removes
/// an idle socket and adds it again for the next call on that connection, two `epoll_ctl` calls per Apple
/// call that parking skips. curl tells the multi of every socket it opens and closes (the easy handle's
/// socket callbacks), so a closed descriptor's number never stays registered for a socket that reuses it.
final class CurlMulti {
    /// One of curl's sockets in the loop's epoll set.
    private struct Registration {
        var events: EventLoop.IOEvents
        /// False while parked: curl removed it (an idle connection), so its events are not curl's business.
        var wanted: Bool
    }

    /// Unowned: the loop owns the multi (loop-local storage), and frees it on its own thread when it stops.
    unowned let loop: EventLoop
    private let handle: UnsafeMutableRawPointer
    private var inFlight: [UnsafeMutableRawPointer: CurlTransfer] = [:]
    private var sockets: [Int32: Registration] = [:]
    private var timer: LoopTimer?
    /// What curl's timer runs, made once: curl moves its timer several times per call.
    private lazy var timerFired: () -> Void = { [unowned self] in
        timer = nil
        act(on: -1 /* CURL_SOCKET_TIMEOUT */, flags: 0)
    }
    private var closed = false
    /// The `https://` hosts called, by origin: their ready connections and the calls waiting for a stream.
    var hosts: [String: HostStreams] = [:]
    /// A call's connection became ready inside a curl callback, where no handle may be added: admit the
    /// waiting calls once curl returns.
    var admitWaiting = false
    let maxConnectionsPerHost: Int

    /// HTTP/2 streams one connection carries at most (CURLMOPT_MAX_CONCURRENT_STREAMS; a server's lower limit
    /// wins). Calls beyond these streams on every ready connection wait (HostStreams).
    static let streamsPerConnection = 100

    init(loop: EventLoop, maxConnectionsPerHost: Int, maxTotalConnections: Int) {
        guard let handle = curl_multi_init() else { fatalError("curl_multi_init failed") }
        self.loop = loop
        self.handle = handle
        self.maxConnectionsPerHost = maxConnectionsPerHost
        twobits_multi_setopt_long(handle, CURLMOPT_MAX_HOST_CONNECTIONS, maxConnectionsPerHost)
        twobits_multi_setopt_long(handle, CURLMOPT_MAXCONNECTS, maxTotalConnections)
        twobits_multi_setopt_long(handle, CURLMOPT_PIPELINING, 2) // CURLPIPE_MULTIPLEX
        twobits_multi_setopt_long(handle, CURLMOPT_MAX_CONCURRENT_STREAMS, Self.streamsPerConnection)
        // Unretained: the loop's local storage owns the multi for the loop's life.
        let me = Unmanaged.passUnretained(self).toOpaque()
        twobits_multi_setopt_socketfn(handle, curlSocketCallback)
        twobits_multi_setopt_ptr(handle, CURLMOPT_SOCKETDATA, me)
        twobits_multi_setopt_timerfn(handle, curlTimerCallback)
        twobits_multi_setopt_ptr(handle, CURLMOPT_TIMERDATA, me)
    }

    deinit { close() }

    /// Starts a transfer (its completion runs on this loop).
    func add(_ transfer: CurlTransfer) {
        if closed { transfer.finish(.failure(.shutDown)); return }
        if transfer.cancelled { transfer.finish(.failure(.cancelled)); return }
        transfer.attach(to: self)
        if transfer.https {
            // In place (the subscript with a default): a copy of the host's state would copy its queue of waiting calls.
            let admitted = hosts[transfer.origin, default: HostStreams()].admit(
                ObjectIdentifier(transfer), streamsPerConnection: Self.streamsPerConnection, maxConnections: maxConnectionsPerHost)
            if !admitted {
                transfer.waitingSince = .now
                hosts[transfer.origin, default: HostStreams()].wait(transfer)
                // Its timeout holds while it waits, even if no stream frees up before (a few ms late: the loop clock is not ContinuousClock).
                _ = loop.schedule(in: .milliseconds(transfer.timeoutMilliseconds + 5)) { [weak self] in self?.expireWaitingCalls() }
                return
            }
        }
        startAdmitted(transfer)
    }

    /// Hands an admitted transfer to curl.
    func startAdmitted(_ transfer: CurlTransfer) {
        let me = Unmanaged.passUnretained(self).toOpaque()
        twobits_easy_setopt_opensocket(transfer.easy, curlOpenSocketCallback)
        twobits_easy_setopt_ptr(transfer.easy, CURLOPT_OPENSOCKETDATA, me)
        twobits_easy_setopt_closesocket(transfer.easy, curlCloseSocketCallback)
        twobits_easy_setopt_ptr(transfer.easy, CURLOPT_CLOSESOCKETDATA, me)
        if transfer.https {
            twobits_easy_setopt_prereq(transfer.easy, curlPrereqCallback)
            twobits_easy_setopt_ptr(transfer.easy, CURLOPT_PREREQDATA, Unmanaged.passUnretained(transfer).toOpaque())
        }
        inFlight[transfer.easy] = transfer
        curl_multi_add_handle(handle, transfer.easy) // sets curl's timer to 0: the transfer starts next turn
    }

    /// Takes a transfer out of curl (its caller was cancelled); it completes with `cancelled`.
    func remove(_ transfer: CurlTransfer) {
        if transfer.https, hosts[transfer.origin]?.removeWaiting(transfer) == true {
            transfer.finish(.failure(.cancelled))
            return
        }
        guard inFlight.removeValue(forKey: transfer.easy) != nil else { return }
        curl_multi_remove_handle(handle, transfer.easy)
        ended(transfer)
        transfer.finish(.failure(.cancelled))
        admitWaitingCalls()
    }

    /// Fails every transfer still running with `shutDown` and frees the handle.
    func close() {
        guard !closed else { return }
        closed = true
        if let timer, loop.inLoop { loop.cancel(timer) }
        for fd in sockets.keys where loop.inLoop { loop.unwatch(fd) }
        sockets.removeAll()
        for (easy, transfer) in inFlight {
            curl_multi_remove_handle(handle, easy)
            transfer.finish(.failure(.shutDown))
        }
        inFlight.removeAll()
        for origin in hosts.keys {
            for transfer in hosts[origin]!.takeAllWaiting() { transfer.finish(.failure(.shutDown)) }
        }
        curl_multi_cleanup(handle)
    }

    fileprivate func socketChanged(_ fd: Int32, what: Int32) {
        if what == 4 /* CURL_POLL_REMOVE */ {
            // Parked, not removed: the next call on this connection usually wants the same events again.
            sockets[fd]?.wanted = false
            return
        }
        var events: EventLoop.IOEvents = []
        if what & 1 != 0 { events.insert(.read) }   // CURL_POLL_IN
        if what & 2 != 0 { events.insert(.write) }  // CURL_POLL_OUT
        if sockets[fd]?.events == events {
            sockets[fd]?.wanted = true
            return
        }
        sockets[fd] = Registration(events: events, wanted: true)
        loop.watch(fd, for: events) { [unowned self] ready in self.socketReady(fd, ready) }
    }

    /// A socket in the epoll set, and whether curl wants it now (for tests).
    struct SocketRegistration: Sendable, Equatable {
        let fd: Int32
        let wanted: Bool
    }

    var registrations: [SocketRegistration] {
        sockets.map { SocketRegistration(fd: $0.key, wanted: $0.value.wanted) }.sorted { $0.fd < $1.fd }
    }

    /// curl opened `fd`: a registration left under that number belongs to a closed socket.
    fileprivate func socketOpened(_ fd: Int32) {
        guard sockets.removeValue(forKey: fd) != nil else { return }
        loop.unwatch(fd)
    }

    /// curl is closing `fd`: out of the epoll set first, so its number is free of registrations.
    fileprivate func socketClosing(_ fd: Int32) {
        for origin in hosts.keys { hosts[origin]!.closed(fd) }
        guard sockets.removeValue(forKey: fd) != nil, loop.inLoop else { return }
        loop.unwatch(fd)
    }

    fileprivate func timerChanged(milliseconds: Int) {
        if let timer { loop.cancel(timer) }
        timer = nil
        guard milliseconds >= 0 else { return }
        // curl forbids calling socket_action from inside this callback: the timer fires on a later turn.
        timer = loop.schedule(in: .milliseconds(milliseconds), timerFired)
    }

    private func socketReady(_ fd: Int32, _ ready: EventLoop.IOEvents) {
        guard sockets[fd]?.wanted == true else {
            // A parked connection's peer closed it (or sent something unasked): stop watching it. curl
            // checks a cached connection before it reuses one, and drops a dead one.
            if sockets.removeValue(forKey: fd) != nil { loop.unwatch(fd) }
            return
        }
        var flags: Int32 = 0
        if ready.contains(.read) { flags |= 1 }   // CURL_CSELECT_IN
        if ready.contains(.write) { flags |= 2 }  // CURL_CSELECT_OUT
        if ready.contains(.error) { flags |= 4 }  // CURL_CSELECT_ERR
        act(on: fd, flags: flags)
    }

    private func act(on fd: Int32, flags: Int32) {
        guard !closed else { return }
        var running: Int32 = 0
        curl_multi_socket_action(handle, fd, flags, &running)
        var left: Int32 = 0
        while let message = curl_multi_info_read(handle, &left) {
            guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle else { continue }
            let code = twobits_msg_result(message)
            curl_multi_remove_handle(handle, easy)
            guard let transfer = inFlight.removeValue(forKey: easy) else { continue }
            ended(transfer)
            transfer.finish(code)
        }
        if admitWaiting { admitWaitingCalls() }
    }
}

// curl calls these from inside curl_multi_* on the loop thread.

private let curlPrereqCallback: twobits_curl_prereq_fn = { clientp, _, _, _, _ in
    guard let clientp else { return 0 }
    let transfer = Unmanaged<CurlTransfer>.fromOpaque(clientp).takeUnretainedValue()
    transfer.attachedMulti?.connected(transfer)
    return 0 // CURL_PREREQFUNC_OK
}

private let curlSocketCallback: twobits_curl_socket_fn = { _, socket, what, userp, _ in
    guard let userp else { return 0 }
    Unmanaged<CurlMulti>.fromOpaque(userp).takeUnretainedValue().socketChanged(socket, what: what)
    return 0
}

private let curlOpenSocketCallback: twobits_curl_opensocket_fn = { clientp, _, address in
    guard let address else { return -1 /* CURL_SOCKET_BAD */ }
    let fd = twobits_curl_open_socket(address)
    if fd >= 0, let clientp { Unmanaged<CurlMulti>.fromOpaque(clientp).takeUnretainedValue().socketOpened(fd) }
    return fd
}

private let curlCloseSocketCallback: twobits_curl_closesocket_fn = { clientp, fd in
    if let clientp { Unmanaged<CurlMulti>.fromOpaque(clientp).takeUnretainedValue().socketClosing(fd) }
    return twobits_curl_close_socket(fd)
}

private let curlTimerCallback: twobits_curl_timer_fn = { _, timeout, userp in
    guard let userp else { return 0 }
    Unmanaged<CurlMulti>.fromOpaque(userp).takeUnretainedValue().timerChanged(milliseconds: Int(timeout))
    return 0
}
