import CMicroHTTPD
import CMicroHTTPDShims
import FoundationEssentials
import Glibc
import WireVocabulary

/// libmicrohttpd 0.9.75 answers some requests itself, before any callback of ours can see them, with an
/// HTML body: a request line or header section larger than the connection's memory (414, 431), a
/// malformed request line or header line (400), an HTTP version other than 1.x (505), no memory (500);
/// and malformed chunked encoding or a chunk size too large (400, 413), which the head check's refusal of
/// chunked bodies now comes before. It has no option to change those
/// answers, but it queues each one by calling its own exported `MHD_queue_response` through its PLT.
/// This module defines `MHD_queue_response`, so the dynamic linker binds those calls here, and the
/// answer becomes the JSON error envelope every other answer uses. Our own answers call the library's
/// function directly (`queue`), never this one.
enum LibraryAnswers {
    typealias QueueResponse = @convention(c) (OpaquePointer?, UInt32, OpaquePointer?) -> MHD_Result

    /// libmicrohttpd's own `MHD_queue_response`: the next definition after this executable's.
    static let libraryQueueResponse: QueueResponse? =
        dlsym(UnsafeMutableRawPointer(bitPattern: -1), "MHD_queue_response").map { unsafeBitCast($0, to: QueueResponse.self) }

    /// Queues one of our answers with libmicrohttpd's own function.
    static func queue(_ connection: OpaquePointer, status: Int, _ response: OpaquePointer) -> MHD_Result {
        guard let libraryQueueResponse else { return .NO }
        return libraryQueueResponse(connection, UInt32(status), response)
    }

    /// What an answer libmicrohttpd gives itself becomes, by its status.
    static func refusal(status: Int) -> HTTPRefusal {
        switch status {
        case 413: .payloadTooLarge
        case 414: .urlTooLong
        case 431: .headersTooLarge
        case 505: HTTPRefusal(505, .httpVersionNotSupported, "only HTTP/1.x is served")
        case 400..<500: .badRequest("the request line, a header line, Content-Length or the chunked encoding is malformed")
        default: HTTPRefusal(500, .internalError, "the server could not read this request")
        }
    }

    /// Replaces the answer libmicrohttpd is about to queue for `connection`; `.NO` makes it close the
    /// connection without an answer.
    static func replace(connection: OpaquePointer, status: UInt32) -> MHD_Result {
        // A refusal of the headers' framing (a Content-Length that is no number, or over 64 bits) comes
        // from libmicrohttpd's header parsing, before our head check: 0.9.75 then writes the answer's
        // status line and headers twice, whatever the answer. Closing is the only clean answer there.
        let headersComplete = twobits_mhd_request_header_size(connection) > 0
        let checked = twobits_mhd_socket_context(connection)
            .map { Unmanaged<ConnectionTracker.Connection>.fromOpaque($0).takeUnretainedValue().headChecked } ?? false
        if headersComplete && !checked { return .NO }

        var answer = refusal(status: Int(status)).response
        // libmicrohttpd adds `Connection: close` itself to the answers it gives.
        answer.headers.removeAll { $0.0 == "Connection" }
        answer.headers.append(("Cache-Control", "no-store"))
        let mhdResponse: OpaquePointer? = answer.body.withUnsafeBytes { raw in
            MHD_create_response_from_buffer(raw.count, UnsafeMutableRawPointer(mutating: raw.baseAddress), .RESPMEM_MUST_COPY)
        }
        guard let mhdResponse else { return .NO }
        defer { MHD_destroy_response(mhdResponse) }
        for (name, value) in answer.headers { MHD_add_response_header(mhdResponse, name, value) }
        return queue(connection, status: Int(status), mhdResponse)
    }
}

/// libmicrohttpd's calls to its own `MHD_queue_response` land here (see `LibraryAnswers`); only the
/// library calls it, and only to give an answer of its own. Public, so the executable exports the
/// symbol; the result is `enum MHD_Result` (a C int: 1 queued, 0 failed).
@_cdecl("MHD_queue_response")
public func twobitsInterposedQueueResponse(_ connection: OpaquePointer?, _ status: UInt32, _ response: OpaquePointer?) -> Int32 {
    guard let connection else { return 0 }
    return LibraryAnswers.replace(connection: connection, status: status) == .YES ? 1 : 0
}
