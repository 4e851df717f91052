import Foundation
public import OutboundHTTP
public import WireFormats

extension SandboxHarness {
    /// One client for the control calls of every harness (the sandbox's control API is plain HTTP on loopback).
    public static let controlClient = CurlClient(maxConnectionsPerHost: 4, maxTotalConnections: 8)

    /// A call to the sandbox's HTTP API (`/sandbox/v1/…` controls, or Apple's endpoints without credentials):
    /// its status and its body parsed as JSON (nil when it is not JSON).
    public func control(_ method: String, _ path: String, _ body: String? = nil) async throws -> (status: Int, json: JSONValue?) {
        let response = try await Self.controlClient.send(OutboundRequest(method: method, url: sandbox.baseURL + path,
                                                                         headers: body == nil ? [] : [("Content-Type", "application/json")],
                                                                         body: body.map { Data($0.utf8) }, timeoutMilliseconds: 5_000))
        return (response.status, try? JSONValue.parse(response.body))
    }
}
