import CMicroHTTPD
import CMicroHTTPDShims
import FoundationEssentials

// The C callbacks libmicrohttpd calls, on the thread of the loop that runs the daemon. They capture
// nothing: the loop's daemon, the connection's tracker entry and the per-request context travel through
// MHD's user-data pointers.

/// A connection is about to be accepted: the global and per-IP caps hold over every loop's daemon.
let acceptPolicy: twobits_mhd_accept_fn = { cls, address, _ in
    guard let cls else { return .NO }
    let daemon = Unmanaged<LoopDaemon>.fromOpaque(cls).takeUnretainedValue()
    return daemon.core.connections.admits(ip: twobits_mhd_ipv4(address)) ? .YES : .NO
}

/// A connection opens or closes: keep the receive-deadline table in step (see `ConnectionTracker`).
let connectionNotifier: twobits_mhd_notify_connection_fn = { cls, connection, socketContext, code in
    guard let cls, let connection, let socketContext else { return }
    let core = Unmanaged<LoopDaemon>.fromOpaque(cls).takeUnretainedValue().core
    let key = UInt(bitPattern: Int(bitPattern: connection))
    if code == .CONNECTION_NOTIFY_STARTED {
        let tracked = core.connections.opened(key, fd: twobits_mhd_connection_fd(connection),
                                                ip: twobits_mhd_ipv4(twobits_mhd_client_address(connection)))
        socketContext.pointee = Unmanaged.passUnretained(tracked).toOpaque()
    } else {
        // MHD closes the socket only after this returns.
        core.connections.closed(key)
        socketContext.pointee = nil
    }
}

/// The request line has arrived. MHD calls this before it splits the target into path and query: keep
/// the target as received, and end the query for MHD (we decode it ourselves, after counting), so a
/// target with thousands of `&` cannot exhaust the connection's memory before our check answers.
/// What this returns becomes the request's context pointer (`con_cls`).
let requestLineHandler: twobits_mhd_uri_log_fn = { cls, uri, connection in
    guard let cls, let connection else { return nil }
    let daemon = Unmanaged<LoopDaemon>.fromOpaque(cls).takeUnretainedValue()
    let target = uri.map { String(cString: $0) } ?? ""
    if let uri, let mark = strchr(uri, Int32(UInt8(ascii: "?"))) {
        // The bytes are MHD's own read buffer (writable); MHD parses the query from here after we return.
        UnsafeMutablePointer(mutating: mark).advanced(by: 1).pointee = 0
    }
    let tracked = twobits_mhd_socket_context(connection).map { Unmanaged<ConnectionTracker.Connection>.fromOpaque($0).takeUnretainedValue() }
    tracked?.headChecked = false
    return Unmanaged.passRetained(ConnectionExchange(connection: connection, target: target, tracked: tracked, daemon: daemon)).toOpaque()
}

let accessHandler: twobits_mhd_access_fn = { cls, connection, url, method, version, uploadData, uploadSize, conCls in
    guard let cls, let connection, let conCls, let uploadSize else { return .NO }
    let daemon = Unmanaged<LoopDaemon>.fromOpaque(cls).takeUnretainedValue()
    let core = daemon.core
    if conCls.pointee == nil {
        let tracked = twobits_mhd_socket_context(connection).map { Unmanaged<ConnectionTracker.Connection>.fromOpaque($0).takeUnretainedValue() }
        let target = url.map { String(cString: $0) } ?? "/"
        conCls.pointee = Unmanaged.passRetained(ConnectionExchange(connection: connection, target: target, tracked: tracked, daemon: daemon)).toOpaque()
    }
    guard let raw = conCls.pointee else { return .NO }
    let exchange = Unmanaged<ConnectionExchange>.fromOpaque(raw).takeUnretainedValue()

    if exchange.head == nil && exchange.refusal == nil && !exchange.answered {
        // First call: only the request line and headers are known.
        switch core.checkHead(connection: connection, url: url, method: method, version: version, exchange: exchange) {
        case .refuse(let request, let response):
            exchange.answered = true
            exchange.tracked?.received()
            core.onAnswered?(request, response, ContinuousClock.now - exchange.started)
            return queue(response, on: connection)
        case .refuseWithoutBody(let response):
            exchange.refusal = response
            return .YES
        case .accept:
            return .YES
        }
    }

    if uploadSize.pointee > 0 {
        let size = uploadSize.pointee
        if !exchange.answered && !exchange.bodyTooLarge && exchange.refusal == nil {
            if exchange.body.count + size > core.configuration.maxBodyBytes {
                exchange.bodyTooLarge = true
                exchange.body = Data()
            } else if let uploadData {
                exchange.body.append(UnsafeRawPointer(uploadData).assumingMemoryBound(to: UInt8.self), count: size)
            }
        }
        uploadSize.pointee = 0
        return .YES
    }
    if exchange.answered { return .YES }

    if exchange.dispatched {
        // Called again after resume: queue what the Swift side produced.
        guard let response = exchange.response else { return .YES }
        exchange.answered = true
        if response.dropConnection { return .NO }
        return queue(response, on: connection)
    }

    // Final call: the whole request has arrived.
    exchange.tracked?.received()
    var request = exchange.head ?? ServerRequest(method: method.map { String(cString: $0) } ?? "GET", path: exchange.target)
    if let refusal = exchange.refusal {
        exchange.answered = true
        core.onAnswered?(request, refusal, ContinuousClock.now - exchange.started)
        return queue(refusal, on: connection)
    }
    exchange.dispatched = true
    request.body = exchange.body
    exchange.body = Data()
    if exchange.bodyTooLarge {
        exchange.answered = true
        let response = core.oversizedBody(request)
        core.onAnswered?(request, response, ContinuousClock.now - exchange.started)
        return queue(response, on: connection)
    }
    MHD_suspend_connection(connection)
    daemon.dispatch(request, exchange: exchange)
    return .YES
}

let completedHandler: twobits_mhd_completed_fn = { _, connection, conCls, _ in
    // A kept-alive connection now waits for its next request: its receive deadline starts again.
    if let connection, let tracked = twobits_mhd_socket_context(connection) {
        Unmanaged<ConnectionTracker.Connection>.fromOpaque(tracked).takeUnretainedValue().awaitNextRequest()
    }
    guard let conCls, let raw = conCls.pointee else { return }
    Unmanaged<ConnectionExchange>.fromOpaque(raw).release()
    conCls.pointee = nil
}

private func queue(_ response: ServerResponse, on connection: OpaquePointer) -> MHD_Result {
    let mhdResponse: OpaquePointer? = response.body.withUnsafeBytes { raw in
        MHD_create_response_from_buffer(raw.count, UnsafeMutableRawPointer(mutating: raw.baseAddress), .RESPMEM_MUST_COPY)
    }
    guard let mhdResponse else { return .NO }
    defer { MHD_destroy_response(mhdResponse) }
    for (name, value) in response.headers { MHD_add_response_header(mhdResponse, name, value) }
    return LibraryAnswers.queue(connection, status: response.status, mhdResponse)
}
