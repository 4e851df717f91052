import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import TwoBitsClient

/// An iPhone played by `twobits sandbox` (its control API, docs/sandbox.md): App Attest keys, attestations and
/// assertions, and DeviceCheck tokens, exactly where an app would call `DCAppAttestService` and `DCDevice`.
final class SimulatedIPhone: AppAttestServiceAPI, DeviceCheckDeviceAPI, @unchecked Sendable {
    /// `DCError`'s documented code for an unsupported feature.
    struct Unsupported: Error {}

    let sandbox: URL
    let appID: String
    let environment: String
    let hasAppAttest: Bool
    let deviceID: String

    init(sandbox: URL, appID: String, environment: String, hasAppAttest: Bool) async throws {
        self.sandbox = sandbox
        self.appID = appID
        self.environment = environment
        self.hasAppAttest = hasAppAttest
        deviceID = try await Self.post(sandbox, "sandbox/v1/devices", [:])["device_id"] as! String
    }

    var isSupported: Bool { true }

    func generateKey() async throws -> String {
        guard hasAppAttest else { throw Unsupported() }
        return try await Self.post(sandbox, "sandbox/v1/app-attest/keys", ["app_id": appID, "environment": environment])["key_id"] as! String
    }

    func attestKey(_ keyId: String, clientDataHash: Data) async throws -> Data {
        let answer = try await Self.post(sandbox, "sandbox/v1/app-attest/attestations",
                                         ["key_id": keyId, "client_data_hash": clientDataHash.base64EncodedString()])
        return Data(base64Encoded: answer["attestation_object"] as! String)!
    }

    func generateAssertion(_ keyId: String, clientDataHash: Data) async throws -> Data {
        let answer = try await Self.post(sandbox, "sandbox/v1/app-attest/assertions",
                                         ["key_id": keyId, "client_data_hash": clientDataHash.base64EncodedString()])
        return Data(base64Encoded: answer["assertion"] as! String)!
    }

    func generateToken() async throws -> Data {
        let answer = try await Self.post(sandbox, "sandbox/v1/devices/\(deviceID)/tokens", [:])
        return Data(base64Encoded: answer["device_token"] as! String)!
    }

    static func dcErrorCode(of error: any Error) -> Int? { error is Unsupported ? 1 : nil }

    private static func post(_ base: URL, _ path: String, _ body: [String: Any]) async throws -> [String: Any] {
        var request = URLRequest(url: base.appendingPathComponent(path))
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = try JSONSerialization.data(withJSONObject: body)
        let (data, _) = try await URLSession.shared.data(for: request)
        return try JSONSerialization.jsonObject(with: data) as? [String: Any] ?? [:]
    }
}

/// An App-Attest-less device: `isSupported` is false, as on older hardware.
final class IPhoneWithoutAppAttest: AppAttestServiceAPI, @unchecked Sendable {
    var isSupported: Bool { false }
    func generateKey() async throws -> String { throw SimulatedIPhone.Unsupported() }
    func attestKey(_ keyId: String, clientDataHash: Data) async throws -> Data { throw SimulatedIPhone.Unsupported() }
    func generateAssertion(_ keyId: String, clientDataHash: Data) async throws -> Data { throw SimulatedIPhone.Unsupported() }
    static func dcErrorCode(of error: any Error) -> Int? { 1 }
}
