import DeviceCheckModel
import Foundation
import Sandbox
import TestSupport
import Testing
import TwoBitsCrypto

/// How Apple's failures reach API clients.
@Suite struct AppleFailureTests {
    @Test func appleUnavailableIs503WithRetryAfter() async throws {
        try await withService(.init(apple: ["timeout_ms": "400"])) { h in
            let device = h.freshDevice()
            h.sandbox.inject(Fault(kind: .status, status: 503, count: 1_000))
            let answer = try await h.post("/v1/devices/validate", #"{"device_token":"\#(device.token)"}"#)
            #expect(answer.status == 503)
            #expect(answer.code == "apple_unavailable")
            #expect(answer.response.status == 503)
            h.sandbox.clearFaults()
            #expect(try await h.post("/v1/devices/validate", #"{"device_token":"\#(device.token)"}"#).status == 200)
        }
    }

    @Test func retryAfterHeaderIsSent() async throws {
        // libcurl's client does not expose headers, so read the raw response over a socket.
        try await withService(.init(apple: ["timeout_ms": "300"])) { h in
            h.sandbox.inject(Fault(kind: .timeout, count: 1_000, delayMilliseconds: 5_000))
            let token = h.freshDevice().token
            let raw = try rawExchange(port: h.service.port, body: #"{"device_token":"\#(token)"}"#, key: h.keys["all"]!)
            #expect(raw.hasPrefix("HTTP/1.1 503"))
            #expect(raw.lowercased().contains("retry-after: "))
            #expect(raw.lowercased().contains("x-request-id: "))
        }
    }

    @Test func rejectedCredentialsAre502() async throws {
        // The sandbox trusts a different key: Apple answers 401 twice (one re-sign), an operator problem.
        try await withService(.init(sandboxKey: P256PrivateKey.generate())) { h in
            let device = h.freshDevice()
            let answer = try await h.post("/v1/devices/validate", #"{"device_token":"\#(device.token)"}"#)
            #expect(answer.status == 502)
            #expect(answer.code == "apple_auth_failed")
            #expect(h.logLines.withLock { $0.contains { $0.contains("Apple rejected this service's credentials") } })
        }
    }

    /// Sends one POST /v1/devices/validate and returns the raw response text.
    func rawExchange(port: UInt16, body: String, key: String) throws -> String {
        let request = "POST /v1/devices/validate HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(key)\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)"
        return String(decoding: try RawHTTP.exchange(port: port, request: request), as: UTF8.self)
    }
}
