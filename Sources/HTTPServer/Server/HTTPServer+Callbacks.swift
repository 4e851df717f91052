import CMicroHTTPD
import Foundation

// The C callbacks libmicrohttpd calls. They capture nothing: the server and the per-request context
// travel through MHD's user-data pointers.

let accessHandler: twobits_mhd_access_fn = { cls, connection, url, method, _, uploadData, uploadSize, conCls in
    guard let cls, let connection, let conCls, let uploadSize else { return .NO }
    let server = Unmanaged<HTTPServer>.fromOpaque(cls).takeUnretainedValue()

    guard let raw = conCls.pointee else {
        // First call: only the headers are known.
        let context = RequestContext(connection: connection)
        conCls.pointee = Unmanaged.passRetained(context).toOpaque()
        if let length = MHD_lookup_connection_value(connection, .HEADER_KIND, "Content-Length").map({ String(cString: $0) }),
           let declared = Int(length), declared > server.configuration.maxBodyBytes {
            context.answered = true
            let request = server.makeRequest(connection: connection, url: url, method: method, body: Data())
            let response = server.oversizedBody(request)
            server.onAnswered?(request, response, ContinuousClock.now - context.started)
            return queue(response, on: connection)
        }
        return .YES
    }
    let context = Unmanaged<RequestContext>.fromOpaque(raw).takeUnretainedValue()

    if uploadSize.pointee > 0 {
        let size = uploadSize.pointee
        if !context.answered && !context.bodyTooLarge {
            if context.body.count + size > server.configuration.maxBodyBytes {
                context.bodyTooLarge = true
                context.body = Data()
            } else if let uploadData {
                context.body.append(UnsafeRawPointer(uploadData).assumingMemoryBound(to: UInt8.self), count: size)
            }
        }
        uploadSize.pointee = 0
        return .YES
    }
    if context.answered { return .YES }

    if context.dispatched {
        // Called again after resume: queue what the Swift side produced.
        guard let response = context.response else { return .YES }
        context.answered = true
        if response.dropConnection { return .NO }
        return queue(response, on: connection)
    }

    context.dispatched = true
    let request = server.makeRequest(connection: connection, url: url, method: method, body: context.body)
    context.body = Data()
    if context.bodyTooLarge {
        context.answered = true
        let response = server.oversizedBody(request)
        server.onAnswered?(request, response, ContinuousClock.now - context.started)
        return queue(response, on: connection)
    }
    MHD_suspend_connection(connection)
    server.dispatch(request, context: context)
    return .YES
}

let completedHandler: twobits_mhd_completed_fn = { _, _, conCls, _ in
    guard let conCls, let raw = conCls.pointee else { return }
    Unmanaged<RequestContext>.fromOpaque(raw).release()
    conCls.pointee = nil
}

private func queue(_ response: HTTPResponse, on connection: OpaquePointer) -> MHD_Result {
    let mhdResponse: OpaquePointer? = response.body.withUnsafeBytes { raw in
        MHD_create_response_from_buffer(raw.count, UnsafeMutableRawPointer(mutating: raw.baseAddress), .RESPMEM_MUST_COPY)
    }
    guard let mhdResponse else { return .NO }
    defer { MHD_destroy_response(mhdResponse) }
    for (name, value) in response.headers { MHD_add_response_header(mhdResponse, name, value) }
    return MHD_queue_response(connection, UInt32(response.status), mhdResponse)
}

/// Collects key/value pairs of one kind into a dictionary through MHD's iterator.
private final class ValueCollector {
    var values: [String: String] = [:]
    let lowercaseKeys: Bool
    init(lowercaseKeys: Bool) { self.lowercaseKeys = lowercaseKeys }
}

private let collectValue: twobits_mhd_kv_fn = { cls, _, key, value in
    guard let cls, let key else { return .YES }
    let collector = Unmanaged<ValueCollector>.fromOpaque(cls).takeUnretainedValue()
    let name = String(cString: key)
    collector.values[collector.lowercaseKeys ? name.lowercased() : name] = value.map { String(cString: $0) } ?? ""
    return .YES
}

extension HTTPServer {
    func makeRequest(connection: OpaquePointer, url: UnsafePointer<CChar>?, method: UnsafePointer<CChar>?, body: Data) -> HTTPRequest {
        let headers = ValueCollector(lowercaseKeys: true)
        let query = ValueCollector(lowercaseKeys: false)
        MHD_get_connection_values(connection, .HEADER_KIND, collectValue, Unmanaged.passUnretained(headers).toOpaque())
        MHD_get_connection_values(connection, .GET_ARGUMENT_KIND, collectValue, Unmanaged.passUnretained(query).toOpaque())
        return HTTPRequest(method: method.map { String(cString: $0) } ?? "GET", path: url.map { String(cString: $0) } ?? "/",
                           query: query.values, headers: headers.values, body: body)
    }
}
