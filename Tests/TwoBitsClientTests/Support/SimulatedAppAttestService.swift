import Foundation
import TwoBitsClient

/// One simulated iPhone's App Attest, as `DCAppAttestService` behaves, driven by the sandbox's control API over
/// HTTP: keys live in the sandbox, and this device knows the ones it generated (a restore onto another device
/// leaves them behind: `invalidKey`). Faults of Apple's own (throttling, unsupported) are played here.
final class SimulatedAppAttestService: AppAttestServiceAPI, @unchecked Sendable {
    enum Operation: Hashable { case generateKey, attestKey, generateAssertion }

    private let sandbox: URL
    private let http: JSONHTTP
    private let lock = NSLock()
    private var supported: Bool
    private var keysOnDevice: Set<String> = []
    private var queuedErrors: [Operation: [StandInDCError]] = [:]
    private var callCounts: [Operation: Int] = [:]
    /// Sandbox faults for the attestations and assertions this device makes (`wrong_nonce`, `bad_signature`, …).
    var attestationFault: String?
    var assertionFault: String?

    init(sandbox: URL, http: JSONHTTP, supported: Bool = true) {
        self.sandbox = sandbox
        self.http = http
        self.supported = supported
    }

    var isSupported: Bool { lock.withLock { supported } }

    func calls(_ operation: Operation) -> Int { lock.withLock { callCounts[operation, default: 0] } }

    /// The next `count` calls of `operation` throw `error`.
    func fail(_ operation: Operation, with error: StandInDCError, count: Int = 1) {
        lock.withLock { queuedErrors[operation, default: []] += Array(repeating: error, count: count) }
    }

    func generateKey() async throws -> String {
        try begin(.generateKey, keyID: nil)
        let answer = try await http.post(sandbox.appendingPathComponent("sandbox/v1/app-attest/keys"),
                                             ["app_id": ClientHarness.appID, "environment": "production"])
        let keyID = answer["key_id"] as! String
        lock.withLock { _ = keysOnDevice.insert(keyID) }
        return keyID
    }

    func attestKey(_ keyId: String, clientDataHash: Data) async throws -> Data {
        try begin(.attestKey, keyID: keyId)
        var body: [String: Any] = ["key_id": keyId, "client_data_hash": clientDataHash.base64EncodedString()]
        if let attestationFault { body["fault"] = attestationFault }
        let answer = try await http.post(sandbox.appendingPathComponent("sandbox/v1/app-attest/attestations"), body)
        return Data(base64Encoded: answer["attestation_object"] as! String)!
    }

    func generateAssertion(_ keyId: String, clientDataHash: Data) async throws -> Data {
        try begin(.generateAssertion, keyID: keyId)
        var body: [String: Any] = ["key_id": keyId, "client_data_hash": clientDataHash.base64EncodedString()]
        if let assertionFault { body["fault"] = assertionFault }
        let answer = try await http.post(sandbox.appendingPathComponent("sandbox/v1/app-attest/assertions"), body)
        return Data(base64Encoded: answer["assertion"] as! String)!
    }

    static func dcErrorCode(of error: any Error) -> Int? { StandInDCError.code(of: error) }

    /// Counts the call and throws what a device would: a queued error, unsupported, or a key it does not hold.
    private func begin(_ operation: Operation, keyID: String?) throws {
        try lock.withLock {
            callCounts[operation, default: 0] += 1
            if var queue = queuedErrors[operation], !queue.isEmpty {
                let error = queue.removeFirst()
                queuedErrors[operation] = queue
                throw error
            }
            guard supported else { throw StandInDCError.featureUnsupported }
            if let keyID, !keysOnDevice.contains(keyID) { throw StandInDCError.invalidKey }
        }
    }
}
