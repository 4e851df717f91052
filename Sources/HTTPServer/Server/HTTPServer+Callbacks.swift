import CMicroHTTPD
import CMicroHTTPDShims
import FoundationEssentials

// The C callbacks libmicrohttpd calls, on the thread of the loop that runs the daemon. They capture
// nothing: the loop's daemon, the connection's tracker entry and the request's exchange travel through
// MHD's user-data pointers.

/// A connection is about to be accepted: the global and per-IP caps hold over every loop's daemon.
let acceptPolicy: twobits_mhd_accept_fn = { cls, address, _ in
    guard let cls else { return .NO }
    let daemon = Unmanaged<DaemonHooks>.fromOpaque(cls).takeUnretainedValue()
    return daemon.connections.admits(ip: twobits_mhd_ipv4(address)) ? .YES : .NO
}

/// A connection opens or closes: keep the receive-deadline table in step (see `ConnectionTracker`).
let connectionNotifier: twobits_mhd_notify_connection_fn = { cls, connection, socketContext, code in
    guard let cls, let connection, let socketContext else { return }
    let daemon = Unmanaged<DaemonHooks>.fromOpaque(cls).takeUnretainedValue()
    let key = UInt(bitPattern: Int(bitPattern: connection))
    if code == .CONNECTION_NOTIFY_STARTED {
        let tracked = daemon.connections.opened(key, fd: twobits_mhd_connection_fd(connection),
                                                ip: twobits_mhd_ipv4(twobits_mhd_client_address(connection)))
        socketContext.pointee = Unmanaged.passUnretained(tracked).toOpaque()
    } else {
        // MHD closes the socket only after this returns.
        daemon.connections.closed(key)
        socketContext.pointee = nil
    }
}

/// The request line has arrived. MHD calls this before it splits the target into path and query: keep
/// the target as received, and end the query for MHD (we decode it ourselves, after counting), so a
/// target with thousands of `&` cannot exhaust the connection's memory before our check answers.
/// What this returns becomes the request's context pointer (`con_cls`).
let requestLineHandler: twobits_mhd_uri_log_fn = { cls, uri, connection in
    guard let cls, let connection else { return nil }
    let daemon = Unmanaged<DaemonHooks>.fromOpaque(cls).takeUnretainedValue()
    let target = uri.map { String(cString: $0) } ?? ""
    if let uri, let mark = strchr(uri, Int32(UInt8(ascii: "?"))) {
        // The bytes are MHD's own read buffer (writable); MHD parses the query from here after we return.
        UnsafeMutablePointer(mutating: mark).advanced(by: 1).pointee = 0
    }
    let tracked = twobits_mhd_socket_context(connection).map { Unmanaged<ConnectionTracker.Connection>.fromOpaque($0).takeUnretainedValue() }
    tracked?.headChecked = false
    return daemon.openExchange(connection: connection, target: target, tracked: tracked)
}

let accessHandler: twobits_mhd_access_fn = { cls, connection, url, method, version, uploadData, uploadSize, conCls in
    guard let cls, let connection, let conCls, let uploadSize else { return .NO }
    return Unmanaged<DaemonHooks>.fromOpaque(cls).takeUnretainedValue()
        .access(connection: connection, url: url, method: method, version: version, uploadData: uploadData, uploadSize: uploadSize, conCls: conCls)
}

let completedHandler: twobits_mhd_completed_fn = { cls, connection, conCls, _ in
    // A kept-alive connection now waits for its next request: its receive deadline starts again.
    if let connection, let tracked = twobits_mhd_socket_context(connection) {
        Unmanaged<ConnectionTracker.Connection>.fromOpaque(tracked).takeUnretainedValue().awaitNextRequest()
    }
    guard let cls, let conCls, let raw = conCls.pointee else { return }
    Unmanaged<DaemonHooks>.fromOpaque(cls).takeUnretainedValue().closeExchange(raw)
    conCls.pointee = nil
}
