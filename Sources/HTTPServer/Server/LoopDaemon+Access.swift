import CMicroHTTPD
import CMicroHTTPDShims
import FoundationEssentials

extension LoopDaemon {
    /// libmicrohttpd's access handler for this daemon's connections: called with the head, with each
    /// body chunk, once the request is complete, and again after the suspended connection is resumed.
    func handleAccess(connection: OpaquePointer, url: UnsafePointer<CChar>?, method: UnsafePointer<CChar>?, version: UnsafePointer<CChar>?,
                      uploadData: UnsafePointer<CChar>?, uploadSize: UnsafeMutablePointer<Int>,
                      conCls: UnsafeMutablePointer<UnsafeMutableRawPointer?>) -> MHD_Result {
        // The request-line callback (MHD_OPTION_URI_LOG_CALLBACK) opened the exchange: libmicrohttpd calls it
        // before the access handler, and its answer is the request's first `con_cls`.
        guard let raw = conCls.pointee else { return .NO }
        let exchange = Unmanaged<ConnectionExchange<Context>>.fromOpaque(raw).takeUnretainedValue()

        if case .awaitingHead = exchange.machine.state {
            // First call: only the request line and headers are known.
            switch core.checkHead(connection: connection, url: url, method: method, version: version, exchange: exchange) {
            case .refuse(let request, let context, let response):
                return act(exchange.machine.headRefused(response), exchange, method: method, request, context)
            case .refuseWithoutBody(let response):
                return act(exchange.machine.headRefusedWithoutBody(response), exchange, method: method)
            case .accept:
                return act(exchange.machine.headAccepted(), exchange, method: method)
            }
        }

        if uploadSize.pointee > 0 {
            let bytes = UnsafeRawBufferPointer(start: uploadData, count: uploadData == nil ? 0 : uploadSize.pointee)
            // Consumed whatever the machine keeps of it: libmicrohttpd reads on only once the chunk is taken.
            _ = exchange.machine.bodyChunk(bytes, limit: core.configuration.maxBodyBytes)
            uploadSize.pointee = 0
            return .YES
        }
        return act(exchange.machine.requestComplete(), exchange, method: method)
    }

    /// Does what the connection's state machine decided, with the request and context as far as they are
    /// known (the head's, or one made from the request line when the edge checks did not get that far).
    private func act(_ action: ConnectionStateMachine.Action, _ exchange: ConnectionExchange<Context>, method: UnsafePointer<CChar>?,
                     _ refusedRequest: ServerRequest? = nil, _ refusedContext: Context? = nil) -> MHD_Result {
        switch action {
        case .nothing, .discardBody:
            return .YES
        case .deliver, .dropLateAnswer, .abandonHandler:
            preconditionFailure("\(action) is an answer's action, not a call's")
        case .queueAnswer(let response):
            return queue(response, on: exchange.connection)
        case .closeConnection:
            return .NO
        case .answerRefusal(let response):
            exchange.tracked?.received()
            let request = refusedRequest ?? requestSoFar(exchange, method: method)
            let context = refusedContext ?? exchange.context ?? core.edge.makeContext(for: request)
            core.edge.answered(request, context: context, response: response, elapsed: ContinuousClock.now - exchange.started)
            return queue(response, on: exchange.connection)
        case .answerOversized:
            exchange.tracked?.received()
            let request = requestSoFar(exchange, method: method)
            var context = exchange.context ?? core.edge.makeContext(for: request)
            let response = core.edge.oversizedBody(request, context: &context)
            core.edge.answered(request, context: context, response: response, elapsed: ContinuousClock.now - exchange.started)
            return queue(response, on: exchange.connection)
        case .suspendAndDispatch(let body):
            // Final call: the whole request has arrived.
            exchange.tracked?.received()
            var request = requestSoFar(exchange, method: method)
            let context = exchange.context ?? core.edge.makeContext(for: request)
            request.body = body
            MHD_suspend_connection(exchange.connection)
            dispatch(request, context, exchange: exchange)
            return .YES
        }
    }

    /// The request without its body: the head once the edge checks passed it, else the request line alone.
    private func requestSoFar(_ exchange: ConnectionExchange<Context>, method: UnsafePointer<CChar>?) -> ServerRequest {
        exchange.head ?? ServerRequest(method: method.map { String(cString: $0) } ?? "GET", path: exchange.target)
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
