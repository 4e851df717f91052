import Foundation
@testable import HTTPServer
import Locking
import Testing

/// A plain TCP client for what curl will not send: trickled headers, duplicate lengths, NUL bytes.
final class RawClient {
    let fd: Int32

    init(port: UInt16, source: String = "127.0.0.1") throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var local = sockaddr_in()
        local.sin_family = sa_family_t(AF_INET)
        inet_pton(AF_INET, source, &local.sin_addr)
        var remote = sockaddr_in()
        remote.sin_family = sa_family_t(AF_INET)
        remote.sin_port = port.bigEndian
        inet_pton(AF_INET, "127.0.0.1", &remote.sin_addr)
        var timeout = timeval(tv_sec: 3, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let bound = withUnsafePointer(to: &local) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        let connected = withUnsafePointer(to: &remote) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        guard bound == 0, connected == 0 else { close(fd); throw POSIXError(.ECONNREFUSED) }
    }

    deinit { close(fd) }

    @discardableResult
    func send(_ bytes: [UInt8]) -> Bool { bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } == bytes.count }
    func send(_ text: String) { send(Array(text.utf8)) }

    /// Everything the server sends until it closes the connection or 3 s pass; nil when it closed at once with nothing.
    func readAll() -> String {
        var data = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n <= 0 { break }
            data += buffer[0..<n]
        }
        return String(decoding: data, as: UTF8.self)
    }

    /// The first bytes of an answer (one receive), the connection left open: proof the server accepted it.
    func readSome() -> String {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        return n > 0 ? String(decoding: buffer[0..<n], as: UTF8.self) : ""
    }

    /// `count` connections, each answered once and kept alive: proof the server has accepted every one (a
    /// fixed sleep was not enough on a loaded machine).
    static func answeredAndKept(_ count: Int, port: UInt16) throws -> [RawClient] {
        let clients = try (0..<count).map { _ in try RawClient(port: port) }
        for client in clients {
            client.send("GET /x HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(client.readSome().hasPrefix("HTTP/1.1 200"))
        }
        return clients
    }

    /// True when the server has closed the connection (end of file or reset) within the receive timeout.
    var closedByServer: Bool {
        var byte: UInt8 = 0
        let n = recv(fd, &byte, 1, 0)
        return n == 0 || (n < 0 && errno == ECONNRESET)
    }
}

@Suite struct HTTPEdgeTests {
    func withServer(_ configuration: HTTPServerConfiguration = HTTPServerConfiguration(),
                    headCheck: (@Sendable (ServerRequest) -> ServerResponse?)? = nil,
                    handler: @escaping @Sendable (ServerRequest) async -> ServerResponse,
                    _ body: (HTTPServer<Void>) async throws -> Void) async throws {
        let server = HTTPServer(configuration: configuration, edge: TestEdge(headCheck: headCheck), handler: handler)
        try server.start()
        try await body(server)
        await server.shutdown(graceMilliseconds: 500)
    }

    @Test func theDeadlineCancelsTheHandlersWork() async throws {
        var config = HTTPServerConfiguration()
        config.requestDeadlineMilliseconds = 100
        let cancelled = Lock<Bool>(false)
        try await withServer(config, handler: { _ in
            do { try await Task.sleep(for: .seconds(5)) } catch { cancelled.withLock { $0 = true } }
            return .text(200, "late")
        }) { server in
            let client = try RawClient(port: server.port)
            client.send("GET /slow HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            #expect(client.readAll().hasPrefix("HTTP/1.1 503"))
            // The handler sees its cancellation long before its 5 s sleep would end.
            for _ in 0..<100 where !cancelled.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(20)) }
            #expect(cancelled.withLock { $0 })
        }
    }

    @Test func aTrickledRequestIsClosedAtTheReceiveDeadline() async throws {
        var config = HTTPServerConfiguration()
        config.receiveTimeoutMilliseconds = 300
        try await withServer(config, handler: { _ in .text(200, "ok") }) { server in
            let client = try RawClient(port: server.port)
            client.send("GET / HTTP/1.1\r\nHost: x\r\n")
            var closed = false
            // A header line every 100 ms: the idle timeout (30 s) never fires, the receive deadline does.
            for _ in 0..<30 where !closed {
                if !client.send(Array("X-Slow: 1\r\n".utf8)) { closed = true; break }
                try await Task.sleep(for: .milliseconds(100))
                var byte: UInt8 = 0
                let n = recv(client.fd, &byte, 1, Int32(MSG_DONTWAIT))
                if n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) { closed = true }
            }
            #expect(closed)
            #expect(server.receiveTimeouts == 1)
            // A prompt request is untouched.
            let prompt = try RawClient(port: server.port)
            prompt.send("GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            #expect(prompt.readAll().hasPrefix("HTTP/1.1 200"))
        }
    }

    @Test func theHeadCheckAnswersBeforeTheBodyIsSent() async throws {
        let handled = Lock<Int>(0)
        try await withServer(headCheck: { $0.header("Authorization") == nil ? .json(401, ["error": ["code": "unauthorized"]]) : nil },
                             handler: { _ in handled.withLock { $0 += 1 }; return .text(200, "ok") }) { server in
            let client = try RawClient(port: server.port)
            // No body byte is sent: the answer must come anyway, and the connection close.
            client.send("POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 60000\r\n\r\n")
            let answer = client.readAll()
            #expect(answer.hasPrefix("HTTP/1.1 401"))
            #expect(answer.contains("Connection: close"))
            #expect(handled.withLock { $0 } == 0)
            // A refused request without a body keeps its connection and is answered the same way.
            let keep = try RawClient(port: server.port)
            keep.send("GET /x HTTP/1.1\r\nHost: x\r\n\r\nGET /x HTTP/1.1\r\nHost: x\r\nAuthorization: k\r\nConnection: close\r\n\r\n")
            let both = keep.readAll()
            #expect(both.hasPrefix("HTTP/1.1 401") && both.contains("HTTP/1.1 200"))
        }
    }

    @Test(arguments: [
        "Content-Length: 2\r\nContent-Length: 2\r\n",
        "Content-Length: 2\r\nContent-Length: 7\r\n",
        "Transfer-Encoding: chunked\r\nContent-Length: 2\r\n",
        "Transfer-Encoding: gzip\r\n",
    ])
    func smugglingShapesAreRefusedAndTheConnectionClosed(_ framing: String) async throws {
        try await withServer(handler: { _ in .text(200, "ok") }) { server in
            let client = try RawClient(port: server.port)
            // A chunked body that is valid, so that only our framing check can refuse it (libmicrohttpd refuses
            // a malformed chunk by itself, with the same 400).
            let body = framing.contains("chunked") ? "2\r\n{}\r\n0\r\n\r\n" : "{}"
            client.send("POST /x HTTP/1.1\r\nHost: x\r\n\(framing)\r\n\(body)")
            let answer = client.readAll()
            #expect(answer.hasPrefix("HTTP/1.1 400"))
            #expect(answer.contains("Connection: close"))
            #expect(answer.contains(#""code":"bad_request""#))
        }
    }

    /// RFC 9112 §5.1 and §2.2: libmicrohttpd keeps whitespace before the colon in the name, so
    /// `Content-Length : N` frames no body and the body ran as a second request on the connection; and it
    /// ends lines at LF only, so a bare CR stayed inside a header.
    @Test(arguments: [
        "Content-Length : 37\r\n",
        "Content-Length\t: 37\r\n",
        "Transfer-Encoding : chunked\r\nContent-Length: 37\r\n",
        "X-Note: a\rContent-Length: 37\r\n",
        "X-Note\r: a\r\nContent-Length: 37\r\n",
    ])
    func aHeaderNameWithWhitespaceOrABareCRIsRefusedAndTheConnectionClosed(_ framing: String) async throws {
        let paths = Lock<[String]>([])
        try await withServer(handler: { request in paths.withLock { $0.append(request.path) }; return .text(200, "ok") }) { server in
            let client = try RawClient(port: server.port)
            let smuggled = "GET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n" // 37 bytes
            client.send("POST /x HTTP/1.1\r\nHost: x\r\n\(framing)\r\n\(smuggled)")
            let answer = client.readAll()
            #expect(answer.hasPrefix("HTTP/1.1 400"), "\(framing.debugDescription)")
            #expect(answer.contains("Connection: close"))
            #expect(answer.contains(#""code":"bad_request""#))
            #expect(!answer.contains("HTTP/1.1 200"))
            #expect(paths.withLock { $0 }.isEmpty)
        }
    }

    /// Issue 40: libmicrohttpd ends a line at a bare LF as at CRLF; a proxy in front that does not would read
    /// `X-A: a\nContent-Length: 37` as one header and the body as the next request. Every line of the head,
    /// the request line and the empty line included, must end in CRLF; a NUL before the CRLF is refused too.
    @Test(arguments: [
        "Host: x\r\nX-A: a\nContent-Length: 37\r\n\r\n",
        "Host: x\nContent-Length: 37\r\n\r\n",
        "Host: x\r\nX-A:\nContent-Length: 37\r\n\r\n",
        "Host: x\r\nX-A: a \nContent-Length: 37\r\n\r\n",
        "Host: x\r\nContent-Length: 37\n\r\n",
        "Host: x\r\nContent-Length: 37\r\n\n",
        "Host: x\r\nContent-Length: 37\n\n",
        "Host: x\r\nX-A: a\u{0}\r\nContent-Length: 37\r\n\r\n",
    ])
    func aBareLFInTheHeadIsRefusedAndTheConnectionClosed(_ lines: String) async throws {
        let paths = Lock<[String]>([])
        try await withServer(handler: { request in paths.withLock { $0.append(request.path) }; return .text(200, "ok") }) { server in
            let client = try RawClient(port: server.port)
            let smuggled = "GET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n" // 37 bytes
            client.send("POST /x HTTP/1.1\r\n\(lines)\(smuggled)")
            let answer = client.readAll()
            #expect(answer.hasPrefix("HTTP/1.1 400"), "\(lines.debugDescription): \(answer.prefix(300))")
            #expect(answer.contains("Connection: close") && answer.contains(#""code":"bad_request""#))
            #expect(paths.withLock { $0 }.isEmpty)
        }
        // The request line's own end.
        try await withServer(handler: { _ in .text(200, "ok") }) { server in
            let client = try RawClient(port: server.port)
            client.send("GET /x HTTP/1.1\nHost: x\r\n\r\n")
            #expect(client.readAll().hasPrefix("HTTP/1.1 400"))
        }
    }

    /// The same heads with CRLF everywhere are served, trailing whitespace and empty values included.
    @Test func aHeadWhoseLinesAllEndInCRLFIsServed() async throws {
        try await withServer(handler: { request in .text(200, request.header("X-A") ?? "-") }) { server in
            for raw in ["GET /x HTTP/1.1\r\nHost: x\r\nX-A: a  \r\nX-B:\r\nX-C: \t c \r\nConnection: close\r\n\r\n",
                        "GET /x HTTP/1.0\r\n\r\n", "POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}"] {
                let client = try RawClient(port: server.port)
                client.send(raw)
                #expect(client.readAll().hasPrefix("HTTP/1.1 200"), "\(raw.debugDescription)")
            }
        }
    }

    /// Issue 40: libmicrohttpd decodes a chunked body itself (bare-LF chunk lines included) and hands over only the
    /// data, so its framing cannot be checked: a chunked body is refused (411), whatever its line ends.
    @Test(arguments: ["2\r\n{}\r\n0\r\n\r\n", "2\n{}\n0\n\n"])
    func aChunkedBodyIsRefusedWithLengthRequired(_ body: String) async throws {
        let seen = Lock<Int>(0)
        try await withServer(handler: { _ in seen.withLock { $0 += 1 }; return .text(200, "ok") }) { server in
            let client = try RawClient(port: server.port)
            client.send("POST /x HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n\(body)")
            let answer = client.readAll()
            #expect(answer.hasPrefix("HTTP/1.1 411") && answer.contains(#""code":"length_required""#), "\(answer.prefix(300))")
            #expect(answer.contains("Connection: close"))
            #expect(seen.withLock { $0 } == 0)
        }
    }

    /// RFC 9112 §3.2: an HTTP/1.1 request without Host is refused (a proxy may route it by a host of its own);
    /// HTTP/1.0 needs none.
    @Test func anHTTP11RequestWithoutHostIsRefused() async throws {
        try await withServer(handler: { _ in .text(200, "ok") }) { server in
            let missing = try RawClient(port: server.port)
            missing.send("GET /x HTTP/1.1\r\nX-A: a\r\n\r\n")
            let answer = missing.readAll()
            #expect(answer.hasPrefix("HTTP/1.1 400") && answer.contains(#""code":"bad_request""#) && answer.contains("Connection: close"),
                    "\(answer.prefix(300))")
            let old = try RawClient(port: server.port)
            old.send("GET /x HTTP/1.0\r\n\r\n")
            #expect(old.readAll().hasPrefix("HTTP/1.1 200"))
        }
    }

    /// A header that decides something, given twice (even with the same value): a proxy or log may have read the
    /// copy the server did not. One argument per name of `singleValuedHeaders`, each also accepted once.
    @Test(arguments: [
        ("Authorization: Bearer a\r\n", "Authorization: Bearer a\r\nauthorization: Bearer b\r\n"),
        ("", "host: x\r\n"),
        ("Content-Type: application/json\r\n", "Content-Type: application/json\r\ncontent-type: application/json\r\n"),
    ])
    func aRepeatedSingleValuedHeaderIsRefused(_ once: String, _ twice: String) async throws {
        let seen = Lock<Int>(0)
        try await withServer(handler: { _ in seen.withLock { $0 += 1 }; return .text(200, "ok") }) { server in
            let one = try RawClient(port: server.port)
            one.send("GET /x HTTP/1.1\r\nHost: x\r\n\(once)Connection: close\r\n\r\n")
            #expect(one.readAll().hasPrefix("HTTP/1.1 200"))
            let two = try RawClient(port: server.port)
            two.send("GET /x HTTP/1.1\r\nHost: x\r\n\(twice)\r\n")
            let answer = two.readAll()
            #expect(answer.hasPrefix("HTTP/1.1 400") && answer.contains(#""code":"bad_request""#), "\(twice.debugDescription): \(answer.prefix(300))")
            #expect(answer.contains("Connection: close"))
            #expect(seen.withLock { $0 } == 1)
        }
    }

    @Test func aRepeatedQueryParameterIsRefused() async throws {
        try await withServer(handler: { request in .text(200, request.query["a"] ?? "-") }) { server in
            let once = try RawClient(port: server.port)
            once.send("GET /x?a=1&b=2 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            #expect(once.readAll().hasSuffix("\r\n\r\n1"))
            // After decoding: `%61` is `a`.
            for query in ["a=1&a=2", "a=1&%61=2", "a&a"] {
                let twice = try RawClient(port: server.port)
                twice.send("GET /x?\(query) HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                let answer = twice.readAll()
                #expect(answer.hasPrefix("HTTP/1.1 400") && answer.contains(#""code":"bad_request""#), "\(query)")
            }
        }
    }

    /// libmicrohttpd answers these itself, before any callback of ours; `LibraryAnswers` turns its HTML
    /// into the JSON envelope (or, where 0.9.75 would write its answer's head twice, closes).
    @Test func answersLibmicrohttpdGivesItselfAreJSON() async throws {
        try await withServer(handler: { _ in .text(200, "ok") }) { server in
            let cases: [(String, String, String)] = [
                ("GET /x?q=\(String(repeating: "a", count: 40_000)) HTTP/1.1\r\nHost: x\r\n\r\n", "414", "uri_too_long"),
                ("GET /x HTTP/1.1\r\nHost: x\r\nX-Big: \(String(repeating: "a", count: 64_000))\r\n\r\n", "431", "headers_too_large"),
                ("GET /x HTTP/2.0\r\nHost: x\r\n\r\n", "505", "http_version_not_supported"),
                ("GET /x HTTP/1.1\r\nHost: x\r\nno colon here\r\n\r\n", "400", "bad_request"),
            ]
            for (raw, status, code) in cases {
                let client = try RawClient(port: server.port)
                client.send(raw)
                let answer = client.readAll()
                #expect(answer.hasPrefix("HTTP/1.1 \(status)"), "\(raw.prefix(40).debugDescription)")
                #expect(answer.contains("Content-Type: application/json") && answer.contains(#"{"error":{"code":"\#(code)""#),
                        "\(raw.prefix(40).debugDescription): \(answer.prefix(300))")
                #expect(!answer.contains("<html>"))
            }
            // A Content-Length that is no number: closed, never the head written twice with HTML.
            let malformed = try RawClient(port: server.port)
            malformed.send("POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 5x\r\n\r\n")
            #expect(malformed.readAll() == "")
            // The same after an answered request on the connection: the edge's state is per request.
            let kept = try RawClient(port: server.port)
            kept.send("GET /x HTTP/1.1\r\nHost: x\r\n\r\nPOST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 5x\r\n\r\n")
            let keptAnswer = kept.readAll()
            #expect(keptAnswer.hasPrefix("HTTP/1.1 200") && keptAnswer.components(separatedBy: "HTTP/1.1 ").count == 2, "\(keptAnswer)")
            // The connections it answered are gone; a good request is served.
            let good = try RawClient(port: server.port)
            good.send("GET /x HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            #expect(good.readAll().hasPrefix("HTTP/1.1 200"))
        }
    }

    @Test func nulBytesInHeadersOrTheTargetAreRefused() async throws {
        let seen = Lock<[String]>([])
        try await withServer(handler: { request in seen.withLock { $0.append(request.header("Authorization") ?? "-") }; return .text(200, "ok") }) { server in
            let good = try RawClient(port: server.port)
            good.send("GET /x HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer k\r\nConnection: close\r\n\r\n")
            #expect(good.readAll().hasPrefix("HTTP/1.1 200"))
            for raw in ["GET /x HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer k\0junk\r\n\r\n",
                        "GET /x HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer k\0\0junk\r\nX-Other: 1\r\n\r\n",
                        "GET /x\0junk HTTP/1.1\r\nHost: x\r\n\r\n",
                        "GET /x?a=1\0junk HTTP/1.1\r\nHost: x\r\n\r\n",
                        "GET /x HTTP/1.1\r\nHost: x\r\nX-Folded: a\r\n b\r\n\r\n"] {
                let bad = try RawClient(port: server.port)
                bad.send(Array(raw.utf8))
                #expect(bad.readAll().hasPrefix("HTTP/1.1 400"), "\(raw.debugDescription)")
            }
            #expect(seen.withLock { $0 } == ["Bearer k"])
        }
    }

    @Test func thePathIsRawAndTheQueryDecodedByTheServer() async throws {
        try await withServer(handler: { request in .text(200, "\(request.path)|\(request.query["q"] ?? "-")") }) { server in
            let client = try RawClient(port: server.port)
            client.send("GET /v1%2fadmin/a+b?q=a%2Fb+c HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            #expect(client.readAll().hasSuffix("/v1%2fadmin/a+b|a/b c"))
            let nul = try RawClient(port: server.port)
            nul.send("GET /a%00b HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            #expect(nul.readAll().hasPrefix("HTTP/1.1 400"))
        }
    }

    @Test func manyQueryParametersGetAJSONAnswer() async throws {
        try await withServer(handler: { _ in .text(200, "ok") }) { server in
            for count in [100, 300, 1_000] {
                let client = try RawClient(port: server.port)
                let query = (0..<count).map { "p\($0)=1" }.joined(separator: "&")
                client.send("GET /x?\(query) HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                let answer = client.readAll()
                // 1,000 parameters make a target over 4 KiB: 414, in JSON too.
                let expected = count <= 100 ? "HTTP/1.1 200" : count < 1_000 ? "HTTP/1.1 400" : "HTTP/1.1 414"
                #expect(answer.hasPrefix(expected), "\(count) parameters")
                if count > 100 { #expect(answer.contains(#"{"error":{"code":"#)) }
            }
        }
    }

    @Test func oversizedHeadersAndTargetsAreAnsweredByUsInJSON() async throws {
        try await withServer(handler: { _ in .text(200, "ok") }) { server in
            let headers = try RawClient(port: server.port)
            headers.send("GET /x HTTP/1.1\r\nHost: x\r\nX-Big: \(String(repeating: "a", count: 10_000))\r\n\r\n")
            let answer = headers.readAll()
            #expect(answer.hasPrefix("HTTP/1.1 431") && answer.contains(#""code":"headers_too_large""#))
            let target = try RawClient(port: server.port)
            target.send("GET /x?q=\(String(repeating: "a", count: 6_000)) HTTP/1.1\r\nHost: x\r\n\r\n")
            let long = target.readAll()
            #expect(long.hasPrefix("HTTP/1.1 414") && long.contains(#""code":"uri_too_long""#))
        }
    }

    @Test func thePerIPCapClosesTheExtraConnection() async throws {
        var config = HTTPServerConfiguration()
        config.maxConnectionsPerIP = 2
        try await withServer(config, handler: { _ in .text(200, "ok") }) { server in
            let held = try (0..<2).map { _ in try RawClient(port: server.port, source: "127.0.0.9") }
            for client in held { client.send("GET /x HTTP/1.1\r\nHost: x\r\n") }
            try await Task.sleep(for: .milliseconds(100))
            let extra = try RawClient(port: server.port, source: "127.0.0.9")
            extra.send("GET /x HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(extra.closedByServer)
            let other = try RawClient(port: server.port, source: "127.0.0.1")
            other.send("GET /x HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            #expect(other.readAll().hasPrefix("HTTP/1.1 200"))
        }
    }

    /// The global cap holds over every loop's daemon (each daemon alone would accept them all): with two
    /// loops and a cap of 3, the fourth connection is closed whichever loop the kernel gave it to.
    @Test func theGlobalCapHoldsAcrossLoops() async throws {
        var config = HTTPServerConfiguration(threads: 2)
        config.maxConnections = 3
        try await withServer(config, handler: { _ in .text(200, "ok") }) { server in
            let held = try RawClient.answeredAndKept(3, port: server.port)
            try withExtendedLifetime(held) {
                for _ in 0..<4 {
                    let extra = try RawClient(port: server.port)
                    extra.send("GET /x HTTP/1.1\r\nHost: x\r\n\r\n")
                    #expect(extra.closedByServer)
                }
            }
        }
    }

    /// On one loop the daemon holds every allowed connection: the next one must still be accepted and
    /// closed by the accept policy, not left waiting in the kernel's backlog (MHD stops accepting at its own limit).
    @Test func aConnectionPastTheCapIsClosedNotQueued() async throws {
        var config = HTTPServerConfiguration(threads: 1)
        config.maxConnections = 2
        try await withServer(config, handler: { _ in .text(200, "ok") }) { server in
            let held = try RawClient.answeredAndKept(2, port: server.port)
            try withExtendedLifetime(held) {
                let extra = try RawClient(port: server.port)
                extra.send("GET /x HTTP/1.1\r\nHost: x\r\n\r\n")
                #expect(extra.closedByServer)
            }
        }
    }

    @Test func theOpenFileLimitIsRaisedAndCapsConnections() async throws {
        try await withServer(handler: { _ in .text(200, "ok") }) { server in
            let limits = server.limits
            #expect(limits.openFiles.soft == limits.openFiles.hard || limits.openFiles.soft >= 1 << 20)
            #expect(limits.maxConnections <= limits.openFiles.soft - 256)
        }
    }

    /// The raise itself: with the soft limit below the hard one (one below: nothing else in the process notices),
    /// starting a server lifts it to the hard limit.
    @Test func aSoftOpenFileLimitBelowTheHardOneIsRaised() throws {
        var limit = rlimit()
        #expect(getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0)
        guard limit.rlim_max != rlim_t.max, limit.rlim_max > 1 else { return }   // unlimited: raised to 1 << 20, seen above
        var lowered = limit
        lowered.rlim_cur = limit.rlim_max - 1
        #expect(setrlimit(Int32(RLIMIT_NOFILE.rawValue), &lowered) == 0)
        #expect(OpenFileLimit.current.soft == Int(limit.rlim_max) - 1)
        let raised = OpenFileLimit.raiseToHard()
        #expect(raised.soft == raised.hard && raised.hard == Int(limit.rlim_max))
    }

    /// An address that is not this machine's (TEST-NET-1), on port 0 (so no port is checked before the daemons
    /// start): the first loop's daemon cannot bind, and `start` says where instead of serving on fewer loops.
    /// (A port already taken is refused before any daemon starts: ServerStartErrorTests.)
    @Test func aDaemonThatCannotBindFailsTheStartNamingTheAddress() async throws {
        var config = HTTPServerConfiguration()
        config.host = "192.0.2.1"
        config.port = 0
        let server = HTTPServer(configuration: config, edge: TestEdge(headCheck: nil), handler: { _ in .text(200, "ok") })
        #expect(throws: HTTPServerError.cannotListen(host: "192.0.2.1", port: 0)) { try server.start() }
    }

    @Test func queryStringDecoding() throws {
        #expect(try QueryString.decode("a=1&b=x%20y+z", maxParameters: 10).get() == ["a": "1", "b": "x y z"])
        #expect(throws: HTTPRefusal.self) { try QueryString.decode("a=1&b=2&a=1", maxParameters: 10).get() }
        #expect(throws: HTTPRefusal.self) { try QueryString.decode("a=%00", maxParameters: 10).get() }
        #expect(throws: HTTPRefusal.self) { try QueryString.decode("a=%G1", maxParameters: 10).get() }
        #expect(throws: HTTPRefusal.self) { try QueryString.decode("a&b&c", maxParameters: 2).get() }
    }
}
