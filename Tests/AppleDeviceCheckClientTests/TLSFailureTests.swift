@testable import AppleDeviceCheckClient
import DeviceCheckModel
import Foundation
import Locking
import TestSupport
import Testing

/// A handshake that fails (here: the sandbox answers a ClientHello in plain HTTP) is `.unavailable(.tlsFailed)`, counted as
/// `tls_failed`, reported with its host for the log, and never makes an update's outcome unknown: the request was
/// never sent. Over real certificates: Tests/python/test_apple_tls.py.
@Suite struct TLSFailureTests {
    final class TLSObserver: AppleCallObserver {
        let outcomes = Lock<[String]>([])
        let failures = Lock<[String]>([])
        func appleCall(endpoint: AppleCallEndpoint, outcome: String, seconds: Double) { outcomes.withLock { $0.append(outcome) } }
        func appleTLSFailed(endpoint: AppleCallEndpoint, host: String, reason: String) {
            failures.withLock { $0.append("\(endpoint.label) \(host): \(reason)") }
        }
    }

    @Test func anUpdateWhoseHandshakeFailsIsUnavailableNotOfUnknownOutcome() async throws {
        try await withSandbox { (h: SandboxHarness) async throws -> Void in
            let observer = TLSObserver()
            let https = "https://" + h.sandbox.baseURL.dropFirst("http://".count)
            let configuration = AppleClientConfiguration(baseURL: https, timeoutMilliseconds: 1_000, initialBackoffMilliseconds: 5,
                                                         maxBackoffMilliseconds: 50)
            let client = AppleDeviceCheckClient(configuration: configuration, tokens: try h.provider(), observer: observer)
            let token = try h.token(h.device())
            let error = await updateFailure(client, token)
            guard case .unavailable(.tlsFailed(let reason))? = error else {
                Issue.record("\(String(describing: error))")
                return
            }
            #expect(reason.contains("SSL"), "\(reason)") // "wrong version number", or SSL_ERROR_SYSCALL when the server hangs up first
            let outcomes = observer.outcomes.withLock { $0 }
            #expect(!outcomes.isEmpty && outcomes.allSatisfy { $0 == "tls_failed" }, "\(outcomes)")
            let failures = observer.failures.withLock { $0 }
            #expect(failures.count == outcomes.count && failures.allSatisfy { $0.hasPrefix("update_two_bits 127.0.0.1: ") }, "\(failures)")
            #expect(h.calls(.update) == 0)
        }
    }

    private func updateFailure(_ client: AppleDeviceCheckClient, _ token: DeviceToken) async -> DeviceCheckError? {
        do {
            try await client.update(token, bits: Bits(bit0: true, bit1: false))
            return nil
        } catch { return error }
    }

    @Test(arguments: [("https://api.devicecheck.apple.com", "api.devicecheck.apple.com"),
                      ("https://user:secret@proxy.example:8443/apple", "proxy.example"),
                      ("https://[::1]:443", "[::1]"), ("http://127.0.0.1:8081", "127.0.0.1")])
    func theLoggedHostIsTheNameAlone(url: String, host: String) {
        #expect(AppleDeviceCheckClient.host(of: url) == host)
    }
}
