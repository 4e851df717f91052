import CMicroHTTPD
import CMicroHTTPDShims
import FoundationEssentials

/// What the first access-handler call decided from the request line and headers alone.
enum HeadOutcome<Context> {
    /// Answer now and close the connection; no body byte is read.
    case refuse(ServerRequest, Context, ServerResponse)
    /// Answer at the final call (the request has no body, so the connection can stay open).
    case refuseWithoutBody(ServerResponse)
    case accept
}

/// One header as libmicrohttpd stores it: pointers into the received bytes, and sizes.
struct RawHeaderField {
    let key: UnsafePointer<CChar>
    let keySize: Int
    let value: UnsafePointer<CChar>?
    let valueSize: Int

    var name: String { String(decoding: UnsafeRawBufferPointer(start: key, count: keySize), as: UTF8.self) }
    var text: String { value.map { String(decoding: UnsafeRawBufferPointer(start: $0, count: valueSize), as: UTF8.self) } ?? "" }

    /// The name is a token (RFC 9110 §5.1: libmicrohttpd keeps whitespace before the colon in it) and
    /// the value holds no control character but HTAB (libmicrohttpd ends lines at LF only, so a bare CR
    /// stays in the value or the name). Byte loops: every header of every request passes here.
    var isWellFormed: Bool {
        guard keySize > 0 else { return false }
        for i in 0..<keySize where !Self.isTokenByte(UInt8(bitPattern: key[i])) { return false }
        if let value {
            for i in 0..<valueSize {
                let byte = UInt8(bitPattern: value[i])
                if (byte < 0x20 && byte != 0x09) || byte == 0x7F { return false }
            }
        }
        return true
    }

    /// tchar: `!#$%&'*+-.^_`|~`, digits and letters.
    static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"): true
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"), UInt8(ascii: "'"),
             UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "^"), UInt8(ascii: "_"),
             UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"): true
        default: false
        }
    }
}

private final class FieldCollector {
    var fields: [RawHeaderField] = []
}

private let collectField: twobits_mhd_kv_n_fn = { cls, _, key, keySize, value, valueSize in
    guard let cls, let key else { return .YES }
    Unmanaged<FieldCollector>.fromOpaque(cls).takeUnretainedValue().fields.append(
        RawHeaderField(key: key, keySize: keySize, value: value, valueSize: valueSize))
    return .YES
}

extension ServerCore {
    /// The edge checks, in the first access-handler call, before any body byte is accepted: sizes,
    /// framing (request smuggling), NUL bytes, the raw path and query, the declared length, then the
    /// owner's head check (route, authentication, role, media type).
    func checkHead(connection: OpaquePointer, url: UnsafePointer<CChar>?, method: UnsafePointer<CChar>?,
                   version: UnsafePointer<CChar>?, exchange: ConnectionExchange<Context>) -> HeadOutcome<Context> {
        exchange.tracked?.headChecked = true
        let collector = FieldCollector()
        withExtendedLifetime(collector) {
            _ = MHD_get_connection_values_n(connection, .HEADER_KIND, collectField, Unmanaged.passUnretained(collector).toOpaque())
        }
        var headers: [String: String] = [:]
        var contentLengths = 0
        var repeated: String? // the first single-valued header seen twice
        var transferEncodings: [String] = []
        var malformedField = false
        for field in collector.fields {
            if !malformedField, !field.isWellFormed { malformedField = true }
            let name = field.name.lowercased()
            let value = field.text
            if headers.updateValue(value, forKey: name) != nil, repeated == nil, configuration.singleValuedHeaders.contains(name) {
                repeated = name
            }
            if name == "content-length" { contentLengths += 1 }
            if name == "transfer-encoding" { transferEncodings.append(value) }
        }
        let target = exchange.target
        let queryStart = target.firstIndex(of: "?")
        let path = String(target[..<(queryStart ?? target.endIndex)])
        var request = ServerRequest(method: method.map { String(cString: $0) } ?? "GET", path: path, headers: headers)
        var context = edge.makeContext(for: request)
        func refuse(_ refusal: HTTPRefusal) -> HeadOutcome<Context> {
            let response = closing(edge.refused(refusal, request, context: &context))
            return .refuse(request, context, response)
        }

        let headerSize = twobits_mhd_request_header_size(connection)
        if target.utf8.count > configuration.maxURLBytes { return refuse(.urlTooLong) }
        if headerSize > configuration.maxHeaderBytes { return refuse(.headersTooLarge) }

        // Request smuggling: `Content-Length : 5` is no length to libmicrohttpd (its name keeps the space), so
        // the body would be read as the next request; a proxy may take it as the length, or end the line
        // at a bare CR (RFC 9112 §5.1, §2.2).
        if malformedField {
            return refuse(.badRequest("a header name that is not a token (whitespace before the colon?) or a control character such as a bare CR in a header"))
        }
        // Which of two credentials, hosts or body types a proxy or logger saw is anyone's guess.
        if let repeated { return refuse(.badRequest("more than one \(repeated) header")) }
        // A proxy in front may frame the body by the other header, or the other copy.
        if contentLengths > 1 { return refuse(.badRequest("more than one Content-Length header")) }
        if !transferEncodings.isEmpty, contentLengths > 0 {
            return refuse(.badRequest("Transfer-Encoding and Content-Length together"))
        }
        if transferEncodings.count > 1 || transferEncodings.contains(where: { $0.lowercased().split(whereSeparator: { $0 == " " || $0 == "\t" }) != ["chunked"] }) {
            return refuse(.badRequest("only a single Transfer-Encoding: chunked is supported"))
        }
        // libmicrohttpd 0.9.75 decodes a chunked body itself, ends its lines at a bare LF too (no option refuses
        // that) and hands over only the data: its framing cannot be checked here, so bodies come with
        // Content-Length only (RFC 9112 §6.3 lets a server ask for it with 411).
        if !transferEncodings.isEmpty { return refuse(.lengthRequired) }
        // RFC 9112 §3.2: an HTTP/1.1 request without Host is invalid, and a proxy in front may route it by a
        // host of its own.
        if let version, strcmp(version, "HTTP/1.0") != 0, headers["host"] == nil {
            return refuse(.badRequest("an HTTP/1.1 request needs a Host header"))
        }

        if let method, let url, headerSize > 0,
           Self.hasUnaccountedBytes(start: method, size: headerSize, requestLine: [
               (method, strlen(method)), (url, target.utf8.count), (version, version.map { strlen($0) } ?? 0),
           ], fields: collector.fields) {
            return refuse(.badRequest("a NUL byte in the request line or a header, or a folded header line"))
        }
        if let method, let version, headerSize > 0,
           Self.hasLineNotEndedByCRLF(headEnd: method + headerSize, requestLineEnd: version + strlen(version), fields: collector.fields) {
            return refuse(.badRequest("a line of the request head ends in a bare LF, not CRLF"))
        }
        if path.utf8.contains(where: { $0 < 0x21 || $0 == 0x7F }) || Self.hasEncodedNUL(path) {
            return refuse(.badRequest("the path has a control character or an encoded NUL"))
        }
        if let queryStart {
            switch QueryString.decode(target[target.index(after: queryStart)...], maxParameters: configuration.maxQueryParameters) {
            case .failure(let refusal): return refuse(refusal)
            case .success(let query): request = ServerRequest(method: request.method, path: path, query: query, headers: headers)
            }
        }

        let declared = headers["content-length"].flatMap { Int($0) } ?? 0
        let hasBody = declared > 0
        if declared > configuration.maxBodyBytes {
            let response = closing(edge.oversizedBody(request, context: &context))
            return .refuse(request, context, response)
        }
        let refusal = edge.checkHead(request, context: &context)
        exchange.head = request
        exchange.context = context
        if let refusal {
            return hasBody ? .refuse(request, context, closing(refusal)) : .refuseWithoutBody(refusal)
        }
        return .accept
    }

    /// True when the path holds `%00` (a percent-encoded NUL; digits have no case). Byte-level: every
    /// request passes here.
    static func hasEncodedNUL(_ path: String) -> Bool {
        var zeros = -1 // zeros seen since the last '%', or -1 outside an escape
        for byte in path.utf8 {
            if byte == 0x25 { zeros = 0 } else if byte == 0x30, zeros >= 0 {
                zeros += 1
                if zeros == 2 { return true }
            } else { zeros = -1 }
        }
        return false
    }

    private func closing(_ response: ServerResponse) -> ServerResponse {
        var response = response
        if response.header("Connection") == nil { response.headers.append(("Connection", "close")) }
        return response
    }

    /// True when a line of the head ends in anything but CRLF, such as a bare LF: libmicrohttpd ends a line
    /// there too, a proxy in front may not, and would read `X-A: a\nContent-Length: 13` as one header
    /// (RFC 9112 §2.2). 0.9.75 has no option to refuse it; it zeroes each line's end in place, CRLF as two
    /// bytes and a bare LF as one, and keeps a value's trailing whitespace in the value. So exactly two bytes
    /// lie between a line's last piece and the next line's name, and four between the last line's and the end
    /// of the head (its CRLF and the empty line's). Only a NUL right before a bare LF looks like a CRLF here.
    static func hasLineNotEndedByCRLF(headEnd: UnsafePointer<CChar>, requestLineEnd: UnsafePointer<CChar>,
                                      fields: [RawHeaderField]) -> Bool {
        var lineEnd = requestLineEnd
        for field in fields {
            guard field.key - lineEnd == 2 else { return true }
            lineEnd = (field.value ?? field.key + field.keySize + 1) + field.valueSize
        }
        return headEnd - lineEnd != 4
    }

    /// True when the received request line and headers hold a byte that is in none of the parsed
    /// pieces and is not a separator libmicrohttpd turned into NUL (or whitespace it skipped).
    ///
    /// libmicrohttpd hands out C strings, so `Bearer key\0junk` reads as `Bearer key`: the `junk` is
    /// found here, as bytes the parse did not account for. A folded header line (its value moved
    /// elsewhere) is refused the same way. The region is `[method, method + REQUEST_HEADER_SIZE)`:
    /// MHD 0.9.75 parses in place and computes that size as the distance from the method to the end
    /// of the headers.
    static func hasUnaccountedBytes(start: UnsafePointer<CChar>, size: Int, requestLine: [(UnsafePointer<CChar>?, Int)],
                                    fields: [RawHeaderField]) -> Bool {
        // One byte per header byte, on the stack when small: this runs for every request.
        withUnsafeTemporaryAllocation(of: Bool.self, capacity: size) { covered in
            covered.initialize(repeating: false)
            func cover(_ pointer: UnsafePointer<CChar>?, _ length: Int) -> Bool {
                guard let pointer, length > 0 else { return true }
                let offset = pointer - start
                guard offset >= 0, offset + length <= size else { return false }
                for i in offset..<(offset + length) { covered[i] = true }
                return true
            }
            for (pointer, length) in requestLine where !cover(pointer, length) { return true }
            for field in fields where !cover(field.key, field.keySize) || !cover(field.value, field.valueSize) { return true }
            for i in 0..<size where !covered[i] {
                let byte = UInt8(bitPattern: start[i])
                if byte != 0, byte != 0x20, byte != 0x09 { return true }
            }
            return false
        }
    }
}
