@testable import OutboundHTTP
import Testing

/// How calls to one host are handed to HTTP/2 streams: within the ready connections' streams at once, beyond
/// them one call at a time opens the next connection, within the connection limit.
@Suite struct HostStreamsTests {
    final class Call {}

    /// `host.admit`, outside `#expect` (which cannot take a mutating call).
    static func take(_ host: inout HostStreams, _ call: ObjectIdentifier, streamsPerConnection: Int, maxConnections: Int) -> Bool {
        host.admit(call, streamsPerConnection: streamsPerConnection, maxConnections: maxConnections)
    }

    @Test func callsBeyondTheStreamsOfReadyConnectionsWaitWhileOneOpensTheNext() {
        var host = HostStreams()
        let calls = (0..<8).map { _ in Call() }
        let ids = calls.map(ObjectIdentifier.init)
        // No connection yet: the first call opens one, the others wait for it.
        #expect(Self.take(&host, ids[0], streamsPerConnection: 2, maxConnections: 2))
        #expect(!Self.take(&host, ids[1], streamsPerConnection: 2, maxConnections: 2))
        host.connected(ids[0], socket: 7, opened: true)
        // Two streams on the ready connection.
        #expect(Self.take(&host, ids[1], streamsPerConnection: 2, maxConnections: 2))
        // Both in use: one call opens the second connection, the next waits.
        #expect(Self.take(&host, ids[2], streamsPerConnection: 2, maxConnections: 2))
        #expect(host.opener == ids[2])
        #expect(!Self.take(&host, ids[3], streamsPerConnection: 2, maxConnections: 2))
        host.connected(ids[2], socket: 8, opened: true)
        #expect(host.opener == nil && host.ready == [7, 8])
        #expect(Self.take(&host, ids[3], streamsPerConnection: 2, maxConnections: 2))
        // Four streams in use on two connections, the limit: wait for a stream.
        #expect(!Self.take(&host, ids[4], streamsPerConnection: 2, maxConnections: 2))
        host.finished(ids[1], http1: false)
        #expect(Self.take(&host, ids[4], streamsPerConnection: 2, maxConnections: 2))
        // A closed connection's streams are gone.
        host.closed(8)
        host.finished(ids[2], http1: false)
        host.finished(ids[3], http1: false)
        #expect(host.admitted == 2)
        #expect(!Self.take(&host, ids[5], streamsPerConnection: 2, maxConnections: 1))
    }

    @Test func anOpenerThatFailsLetsTheNextCallTry() {
        var host = HostStreams()
        let a = ObjectIdentifier(Call()), b = ObjectIdentifier(Call())
        #expect(Self.take(&host, a, streamsPerConnection: 100, maxConnections: 4))
        #expect(!Self.take(&host, b, streamsPerConnection: 100, maxConnections: 4))
        host.finished(a, http1: false) // its handshake failed
        #expect(Self.take(&host, b, streamsPerConnection: 100, maxConnections: 4))
    }

    @Test func anHTTP1HostIsLeftToCurlsOwnLimit() {
        var host = HostStreams()
        let calls = (0..<5).map { _ in ObjectIdentifier(Call()) }
        #expect(Self.take(&host, calls[0], streamsPerConnection: 1, maxConnections: 1))
        host.finished(calls[0], http1: true)
        for call in calls.dropFirst() { #expect(Self.take(&host, call, streamsPerConnection: 1, maxConnections: 1)) }
    }

    /// The key calls share connections by: the URL's scheme and authority, lower-cased, nothing after them.
    @Test func theOriginIsTheLowerCasedSchemeAndAuthority() {
        #expect(CurlTransfer.origin(of: "https://api.development.devicecheck.apple.com/v1/query_two_bits") == "https://api.development.devicecheck.apple.com")
        #expect(CurlTransfer.origin(of: "HTTPS://API.DeviceCheck.Apple.com:443/v1/Update_Two_Bits") == "https://api.devicecheck.apple.com:443")
        #expect(CurlTransfer.origin(of: "http://127.0.0.1:8081?x=/y") == "http://127.0.0.1:8081")
        #expect(CurlTransfer.origin(of: "Https://Bücher.example#frag") == "https://bücher.example")
        #expect(CurlTransfer.origin(of: "ftp://Host/path") == "ftp:")
        #expect(CurlTransfer.origin(of: "http:/") == "http:")
    }
}
