import DeviceCheckModel
import FoundationEssentials
import HTTPServer

/// Routes the sandbox's HTTP requests: Apple's three endpoints and the control API.
struct SandboxRouter: Sendable {
    typealias Handler = @Sendable (AppleSandbox, ServerRequest) async -> ServerResponse
    let router: Router<Handler>

    init() {
        var r = Router<Handler>()
        for endpoint in AppleEndpoint.allCases {
            r.add("POST", endpoint.path) { sandbox, request in await sandbox.answerApple(endpoint, request) }
        }
        r.add("POST", "/v1/attestationData") { sandbox, request in await sandbox.answerAttestationData(request) }
        r.add("POST", "/sandbox/v1/devices") { sandbox, request in sandbox.controlCreateDevice(request) }
        r.add("GET", "/sandbox/v1/devices/{id}") { sandbox, request in sandbox.controlReadDevice(request) }
        r.add("PUT", "/sandbox/v1/devices/{id}") { sandbox, request in sandbox.controlSeedDevice(request) }
        r.add("POST", "/sandbox/v1/devices/{id}/tokens") { sandbox, request in sandbox.controlMintTokens(request) }
        r.add("POST", "/sandbox/v1/device-tokens") { sandbox, request in sandbox.controlMintFreshDeviceTokens(request) }
        r.add("POST", "/sandbox/v1/faults") { sandbox, request in sandbox.controlInjectFault(request) }
        r.add("DELETE", "/sandbox/v1/faults") { sandbox, _ in sandbox.clearFaults(); return .json(200, ["faults": 0]) }
        r.add("PUT", "/sandbox/v1/latency") { sandbox, request in sandbox.controlSetLatency(request) }
        r.add("GET", "/sandbox/v1/counters") { sandbox, _ in .json(200, sandbox.counters) }
        r.add("GET", "/sandbox/v1/writes") { sandbox, request in sandbox.controlReadWrites(request) }
        r.add("DELETE", "/sandbox/v1/counters") { sandbox, _ in sandbox.resetCounters(); return .json(200, sandbox.counters) }
        r.add("POST", "/sandbox/v1/app-attest/keys") { sandbox, request in sandbox.controlCreateAppAttestKey(request) }
        r.add("POST", "/sandbox/v1/app-attest/attestations") { sandbox, request in sandbox.controlAttest(request) }
        r.add("POST", "/sandbox/v1/app-attest/assertions") { sandbox, request in sandbox.controlAssert(request) }
        r.add("GET", "/sandbox/v1/app-attest/root.pem") { sandbox, _ in
            ServerResponse(status: 200, headers: [("Content-Type", "application/x-pem-file")], body: Data(sandbox.appAttestAuthority.rootPEM.utf8))
        }
        r.add("GET", "/sandbox/v1/app-attest/receipt-root.pem") { sandbox, _ in
            ServerResponse(status: 200, headers: [("Content-Type", "application/x-pem-file")], body: Data(sandbox.appAttestAuthority.receiptAuthority.rootPEM.utf8))
        }
        r.add("GET", "/sandbox/v1/app-attest/clock") { sandbox, _ in sandbox.controlReadAppAttestClock() }
        r.add("PUT", "/sandbox/v1/app-attest/clock") { sandbox, request in sandbox.controlSetAppAttestClock(request) }
        r.add("GET", "/sandbox/v1/app-attest/receipt-interval") { sandbox, _ in sandbox.controlReadReceiptRefreshInterval() }
        r.add("PUT", "/sandbox/v1/app-attest/receipt-interval") { sandbox, request in sandbox.controlSetReceiptRefreshInterval(request) }
        r.add("GET", "/sandbox/v1/healthz") { _, _ in .json(200, ["status": "ok"]) }
        router = r
    }

    func handle(_ request: ServerRequest, sandbox: AppleSandbox) async -> ServerResponse {
        switch router.match(method: request.method, path: request.path) {
        case .found(let route, let parameters):
            var request = request
            request.parameters = parameters
            return await route.handler(sandbox, request)
        case .methodNotAllowed(let allowed):
            var response = ServerResponse.text(405, AppleResponseBody.methodNotAllowed)
            response.headers.append(("Allow", allowed.joined(separator: ", ")))
            return response
        case .notFound:
            return .text(404, "Not Found")
        }
    }
}
