import CCurl
import CCurlShims
import Foundation
import HTTPServer
@testable import OutboundHTTP
import Testing

/// TLS as curl does it for TwoBits: verification cannot be turned off, a failed or stalled handshake is told apart
/// from a lost connection or a slow answer, and `caFile` replaces the trust anchors. (Over a real terminator with
/// Apple's host names: Tests/python/test_apple_tls.py.)
@Suite struct OutboundTLSTests {
    @Test func certificateAndHostVerificationCannotBeTurnedOff() throws {
        let easy = try #require(curl_easy_init())
        defer { curl_easy_cleanup(easy) }
        for (option, value) in [(CURLOPT_SSL_VERIFYPEER, 0), (CURLOPT_SSL_VERIFYHOST, 0), (CURLOPT_SSL_VERIFYHOST, 1),
                                (CURLOPT_PROXY_SSL_VERIFYPEER, 0), (CURLOPT_PROXY_SSL_VERIFYHOST, 0),
                                (CURLOPT_SSLVERSION, Int(CURL_SSLVERSION_TLSv1_1)), (CURLOPT_SSLVERSION, Int(CURL_SSLVERSION_DEFAULT))] {
            #expect(twobits_easy_setopt_long(easy, option, value) == CURLE_BAD_FUNCTION_ARGUMENT, "\(option) = \(value)")
        }
        // curl's defaults, the only values the setter lets through.
        #expect(twobits_easy_setopt_long(easy, CURLOPT_SSL_VERIFYPEER, 1) == CURLE_OK)
        #expect(twobits_easy_setopt_long(easy, CURLOPT_SSL_VERIFYHOST, 2) == CURLE_OK)
        #expect(twobits_easy_setopt_long(easy, CURLOPT_SSLVERSION, Int(CURL_SSLVERSION_TLSv1_3)) == CURLE_OK)
    }

    @Test func aHandshakeAnsweredInPlainHTTPIsATLSFailure() async throws {
        try await withPlainServer { client, port in
            let error = await failure(client, OutboundRequest(url: "https://127.0.0.1:\(port)/", timeoutMilliseconds: 5_000))
            guard case .tlsFailed(let reason) = error else { Issue.record("\(String(describing: error))"); return }
            #expect(reason.contains("SSL"), "\(reason)") // "wrong version number", or SSL_ERROR_SYSCALL when the server hangs up first
        }
    }

    @Test func aCAFileReplacesTheTrustAnchors() async throws {
        // A bundle curl cannot load fails the handshake before the ClientHello: proof the file is the one used.
        let client = CurlClient(caFile: "/nonexistent/twobits-ca.pem")
        defer { client.shutdown() }
        try await withPlainServer { _, port in
            let error = await failure(client, OutboundRequest(url: "https://127.0.0.1:\(port)/", timeoutMilliseconds: 5_000))
            guard case .tlsFailed(let reason) = error else { Issue.record("\(String(describing: error))"); return }
            #expect(reason.contains("/nonexistent/twobits-ca.pem"), "\(reason)")
        }
    }

    @Test func aHandshakeThatNeverGetsAnAnswerIsATLSFailureNotATimeout() async throws {
        // Listening, never accepting: the kernel completes the TCP connection, nobody answers the ClientHello.
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        #expect(bound && listen(fd, 16) == 0)
        let port = Int(UInt16(bigEndian: address.sin_port))
        let client = CurlClient()
        defer { client.shutdown() }
        let error = await failure(client, OutboundRequest(url: "https://127.0.0.1:\(port)/", timeoutMilliseconds: 300))
        #expect(error == .tlsFailed(CurlTransfer.handshakeStalled), "\(String(describing: error))")
        // The same stall over plain HTTP is a timeout: the request was sent, the answer is late.
        let plain = await failure(client, OutboundRequest(url: "http://127.0.0.1:\(port)/", timeoutMilliseconds: 300))
        #expect(plain == .timedOut, "\(String(describing: plain))")
    }

    private func failure(_ client: CurlClient, _ request: OutboundRequest) async -> OutboundError? {
        do {
            let answer = try await client.send(request)
            Issue.record("answered \(answer.status)")
            return nil
        } catch { return error }
    }

    private func withPlainServer(_ body: (CurlClient, Int) async throws -> Void) async throws {
        let server = HTTPServer(configuration: HTTPServerConfiguration(threads: 1)) { _ in .text(200, "plain") }
        try server.start()
        let client = CurlClient()
        do { try await body(client, Int(server.port)) } catch {
            client.shutdown()
            await server.shutdown()
            throw error
        }
        client.shutdown()
        await server.shutdown()
    }
}
