import CMicroHTTPD
import CMicroHTTPDShims
import FoundationEssentials

extension LoopDaemon {
    /// libmicrohttpd's access handler for this daemon's connections: called with the head, with each
    /// body chunk, once the request is complete, and again after the suspended connection is resumed.
    func handleAccess(connection: OpaquePointer, url: UnsafePointer<CChar>?, method: UnsafePointer<CChar>?, version: UnsafePointer<CChar>?,
                      uploadData: UnsafePointer<CChar>?, uploadSize: UnsafeMutablePointer<Int>,
                      conCls: UnsafeMutablePointer<UnsafeMutableRawPointer?>) -> MHD_Result {
        if conCls.pointee == nil {
            let tracked = twobits_mhd_socket_context(connection).map { Unmanaged<ConnectionTracker.Connection>.fromOpaque($0).takeUnretainedValue() }
            let target = url.map { String(cString: $0) } ?? "/"
            conCls.pointee = openExchange(connection: connection, target: target, tracked: tracked)
        }
        guard let raw = conCls.pointee else { return .NO }
        let exchange = Unmanaged<ConnectionExchange<Context>>.fromOpaque(raw).takeUnretainedValue()

        if exchange.head == nil && exchange.refusal == nil && !exchange.answered {
            // First call: only the request line and headers are known.
            switch core.checkHead(connection: connection, url: url, method: method, version: version, exchange: exchange) {
            case .refuse(let request, let context, let response):
                exchange.answered = true
                exchange.tracked?.received()
                core.onAnswered?(request, context, response, ContinuousClock.now - exchange.started)
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
        var context = exchange.context ?? core.makeContext(request)
        if let refusal = exchange.refusal {
            exchange.answered = true
            core.onAnswered?(request, context, refusal, ContinuousClock.now - exchange.started)
            return queue(refusal, on: connection)
        }
        exchange.dispatched = true
        request.body = exchange.body
        exchange.body = Data()
        if exchange.bodyTooLarge {
            exchange.answered = true
            let response = core.oversizedBody(request, &context)
            core.onAnswered?(request, context, response, ContinuousClock.now - exchange.started)
            return queue(response, on: connection)
        }
        MHD_suspend_connection(connection)
        dispatch(request, context, exchange: exchange)
        return .YES
    }
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
