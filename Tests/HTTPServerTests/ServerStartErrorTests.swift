import HTTPServer
import Testing

/// Starting a server on an address that is not IPv4, or on a port already taken, fails with a named error.
@Suite struct ServerStartErrorTests {
    @Test func anInvalidAddressAndABusyPortAreNamed() async throws {
        let invalid = HTTPServer(configuration: HTTPServerConfiguration(host: "localhost:80"), handler: { _ in .text(200, "") })
        do {
            try invalid.start()
            Issue.record("a server started on an invalid address")
        } catch {
            #expect(error.description.contains("'localhost:80' is not an IPv4 address"))
        }

        let first = HTTPServer(configuration: HTTPServerConfiguration(), handler: { _ in .text(200, "") })
        try first.start()
        let second = HTTPServer(configuration: HTTPServerConfiguration(port: first.port), handler: { _ in .text(200, "") })
        do {
            try second.start()
            Issue.record("two servers listen on port \(first.port)")
            await second.shutdown(graceMilliseconds: 100)
        } catch {
            #expect(error.description == "cannot listen on 127.0.0.1:\(first.port) (port in use, or not permitted)")
        }
        await first.shutdown(graceMilliseconds: 100)
    }
}
