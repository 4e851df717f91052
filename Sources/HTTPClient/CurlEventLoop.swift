import CCurl
import Foundation

/// The transfer thread's own state under `curl_multi_socket_action`: an epoll set holding exactly
/// the sockets curl asks to watch, an eventfd to wake the thread, and curl's next timeout.
///
/// Unlike `curl_multi_poll`, which polls every connection on every wake-up, work here is
/// proportional to the sockets that are ready: thousands of idle connections cost nothing.
final class CurlEventLoop {
    let epoll: Int32
    let wake: Int32
    /// When curl wants `CURL_SOCKET_TIMEOUT` processed next; nil when it has no timer.
    var timerDeadline: ContinuousClock.Instant?

    init() {
        epoll = twobits_epoll_create()
        wake = twobits_eventfd_create()
        precondition(epoll >= 0 && wake >= 0, "epoll or eventfd unavailable")
        _ = twobits_epoll_watch_read(epoll, wake)
    }

    deinit {
        close(epoll)
        close(wake)
    }

    /// Attaches the socket and timer callbacks to a multi handle.
    func install(on multi: UnsafeMutableRawPointer) {
        let me = Unmanaged.passUnretained(self).toOpaque()
        twobits_multi_setopt_socketfn(multi, curlSocketCallback)
        twobits_multi_setopt_ptr(multi, CURLMOPT_SOCKETDATA, me)
        twobits_multi_setopt_timerfn(multi, curlTimerCallback)
        twobits_multi_setopt_ptr(multi, CURLMOPT_TIMERDATA, me)
    }

    /// Milliseconds epoll may sleep: until curl's timer, or a second when it has none.
    var waitMilliseconds: Int32 {
        guard let deadline = timerDeadline else { return 1_000 }
        let left = deadline - ContinuousClock.now
        let ms = left.components.seconds * 1_000 + left.components.attoseconds / 1_000_000_000_000_000
        return Int32(max(0, min(ms + 1, 1_000)))
    }

    /// True once curl's timer has expired (and clears it).
    func takeExpiredTimer() -> Bool {
        guard let deadline = timerDeadline, deadline <= ContinuousClock.now else { return false }
        timerDeadline = nil
        return true
    }
}

// curl calls these from inside curl_multi_* on the transfer thread only.

private let curlSocketCallback: twobits_curl_socket_fn = { _, socket, what, userp, _ in
    guard let userp else { return 0 }
    let loop = Unmanaged<CurlEventLoop>.fromOpaque(userp).takeUnretainedValue()
    _ = twobits_epoll_apply(loop.epoll, socket, what)
    return 0
}

private let curlTimerCallback: twobits_curl_timer_fn = { _, timeout, userp in
    guard let userp else { return 0 }
    let loop = Unmanaged<CurlEventLoop>.fromOpaque(userp).takeUnretainedValue()
    loop.timerDeadline = timeout < 0 ? nil : ContinuousClock.now + .milliseconds(Int64(timeout))
    return 0
}
