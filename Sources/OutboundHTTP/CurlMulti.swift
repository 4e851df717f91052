import CCurl
import EventLoops

/// One libcurl multi handle on one event loop: curl's sockets sit in the loop's epoll set
/// (`CURLMOPT_SOCKETFUNCTION`) and its timeout is a loop timer (`CURLMOPT_TIMERFUNCTION`), so a transfer
/// started on a loop runs, and completes, on that loop's thread. Touched only on that thread.
final class CurlMulti {
    /// Unowned: the loop owns the multi (loop-local storage), and frees it on its own thread when it stops.
    unowned let loop: EventLoop
    private let handle: UnsafeMutableRawPointer
    private var inFlight: [UnsafeMutableRawPointer: CurlTransfer] = [:]
    private var watched: Set<Int32> = []
    private var timer: LoopTimer?
    /// What curl's timer runs, made once: curl moves its timer several times per call.
    private lazy var timerFired: () -> Void = { [unowned self] in
        timer = nil
        act(on: -1 /* CURL_SOCKET_TIMEOUT */, flags: 0)
    }
    private var closed = false

    init(loop: EventLoop, maxConnectionsPerHost: Int, maxTotalConnections: Int) {
        guard let handle = curl_multi_init() else { fatalError("curl_multi_init failed") }
        self.loop = loop
        self.handle = handle
        twobits_multi_setopt_long(handle, CURLMOPT_MAX_HOST_CONNECTIONS, maxConnectionsPerHost)
        twobits_multi_setopt_long(handle, CURLMOPT_MAXCONNECTS, maxTotalConnections)
        twobits_multi_setopt_long(handle, CURLMOPT_PIPELINING, 2) // CURLPIPE_MULTIPLEX
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
        inFlight[transfer.easy] = transfer
        curl_multi_add_handle(handle, transfer.easy) // sets curl's timer to 0: the transfer starts next turn
    }

    /// Takes a transfer out of curl (its caller was cancelled); it completes with `cancelled`.
    func remove(_ transfer: CurlTransfer) {
        guard inFlight.removeValue(forKey: transfer.easy) != nil else { return }
        curl_multi_remove_handle(handle, transfer.easy)
        transfer.finish(.failure(.cancelled))
    }

    /// Fails every transfer still running with `shutDown` and frees the handle.
    func close() {
        guard !closed else { return }
        closed = true
        if let timer, loop.inLoop { loop.cancel(timer) }
        for fd in watched where loop.inLoop { loop.unwatch(fd) }
        for (easy, transfer) in inFlight {
            curl_multi_remove_handle(handle, easy)
            transfer.finish(.failure(.shutDown))
        }
        inFlight.removeAll()
        curl_multi_cleanup(handle)
    }

    fileprivate func socketChanged(_ fd: Int32, what: Int32) {
        if what == 4 /* CURL_POLL_REMOVE */ {
            watched.remove(fd)
            loop.unwatch(fd)
            return
        }
        var events: EventLoop.IOEvents = []
        if what & 1 != 0 { events.insert(.read) }   // CURL_POLL_IN
        if what & 2 != 0 { events.insert(.write) }  // CURL_POLL_OUT
        watched.insert(fd)
        loop.watch(fd, for: events) { [unowned self] ready in self.socketReady(fd, ready) }
    }

    fileprivate func timerChanged(milliseconds: Int) {
        if let timer { loop.cancel(timer) }
        timer = nil
        guard milliseconds >= 0 else { return }
        // curl forbids calling socket_action from inside this callback: the timer fires on a later turn.
        timer = loop.schedule(in: .milliseconds(milliseconds), timerFired)
    }

    private func socketReady(_ fd: Int32, _ ready: EventLoop.IOEvents) {
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
            inFlight.removeValue(forKey: easy)?.finish(code)
        }
    }
}

// curl calls these from inside curl_multi_* on the loop thread.

private let curlSocketCallback: twobits_curl_socket_fn = { _, socket, what, userp, _ in
    guard let userp else { return 0 }
    Unmanaged<CurlMulti>.fromOpaque(userp).takeUnretainedValue().socketChanged(socket, what: what)
    return 0
}

private let curlTimerCallback: twobits_curl_timer_fn = { _, timeout, userp in
    guard let userp else { return 0 }
    Unmanaged<CurlMulti>.fromOpaque(userp).takeUnretainedValue().timerChanged(milliseconds: Int(timeout))
    return 0
}
