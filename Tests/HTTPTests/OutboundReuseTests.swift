import Foundation
import HTTPServer
@testable import OutboundHTTP
import Testing

/// curl's easy handles are reset and reused between calls (`EasyHandlePool`), and header lists are shared
/// between calls with the same headers (`CurlHeaderList`): nothing of one call (method, header, body) may
/// reach another.
@Suite struct OutboundReuseTests {
    @Test func aReusedHandleCarriesNothingFromThePreviousCall() async throws {
        try await withEcho({ request in
            "\(request.method) probe=\(request.header("x-probe") ?? "none") body=\(request.body.count)"
        }) { client, url in
            // One at a time, so each call after the first takes the handle the one before gave back.
            for round in 0..<3 {
                let posted = try await client.send(OutboundRequest(method: "POST", url: url, headers: [("X-Probe", "r\(round)")], body: Data(repeating: 7, count: 3_000)))
                #expect(posted.text == "POST probe=r\(round) body=3000", "\(posted.text)")
                let plain = try await client.send(OutboundRequest(url: url))
                #expect(plain.text == "GET probe=none body=0", "\(plain.text)")
                let put = try await client.send(OutboundRequest(method: "PUT", url: url, body: Data()))
                #expect(put.text == "PUT probe=none body=0", "\(put.text)")
            }
            #expect(EasyHandlePool.shared.idleCount > 0)
        }
    }

    /// Calls in flight together with three header sets, each replacing another's list in the cache,
    /// each send their own.
    @Test func callsInFlightTogetherWithDifferentHeadersEachSendTheirOwn() async throws {
        try await withEcho({ request in "probe=\(request.header("x-probe") ?? "none")" }) { client, url in
            let answers = try await withThrowingTaskGroup(of: (String, String).self) { group in
                for call in 0..<60 {
                    let probe = ["a", "b", "c"][call % 3]
                    group.addTask {
                        let headers = probe == "c" ? [] : [("X-Probe", probe), ("Content-Type", "text/plain")]
                        let answer = try await client.send(OutboundRequest(method: "POST", url: url, headers: headers, body: Data("x".utf8)))
                        return (probe == "c" ? "none" : probe, answer.text)
                    }
                }
                return try await group.reduce(into: [(String, String)]()) { $0.append($1) }
            }
            #expect(answers.count == 60)
            for (probe, text) in answers { #expect(text == "probe=\(probe)") }
        }
    }

    /// A loopback server answering 200 with `answer(request)`, and a client to call it.
    private func withEcho(_ answer: @escaping @Sendable (ServerRequest) -> String,
                          _ body: (CurlClient, String) async throws -> Void) async throws {
        let echo = HTTPServer(configuration: HTTPServerConfiguration(threads: 2)) { request in .text(200, answer(request)) }
        try echo.start()
        let client = CurlClient()
        do { try await body(client, "http://127.0.0.1:\(echo.port)/") } catch {
            client.shutdown()
            await echo.shutdown()
            throw error
        }
        client.shutdown()
        await echo.shutdown()
    }
}
