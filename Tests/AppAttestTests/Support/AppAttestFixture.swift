import AppAttest
import Foundation
import WireFormats

/// One real capture from Tests/Fixtures/AppAttest (see its README for the sources).
struct AppAttestFixture: CustomStringConvertible, Sendable {
    struct Assertion: Sendable {
        let assertion: Data
        let clientData: Data
        let counterBefore: UInt32
        let counterAfter: UInt32
    }

    let name: String
    let appID: AppID
    let keyID: Data?
    let clientDataHash: Data?
    let attestation: Data?
    let verifyAt: Date?
    let environment: AppAttestEnvironment?
    let publicKey: Data?
    let assertions: [Assertion]

    var description: String { name }

    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fixtures/AppAttest")

    static let names: [String] = {
        let files = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return files.filter { $0.hasSuffix(".json") }.map { String($0.dropLast(5)) }.sorted()
    }()

    /// The fixtures with an attestation.
    static let attestationNames: [String] = names.filter { load($0).attestation != nil }

    static func load(_ name: String) -> AppAttestFixture {
        let url = directory.appendingPathComponent(name + ".json")
        guard let data = try? Data(contentsOf: url),
              let json = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else { fatalError("cannot read \(url.path)") }
        func base64(_ key: String) -> Data? { (json[key] as? String).flatMap { Data(base64Encoded: $0) } }
        func hex(_ key: String) -> Data? { (json[key] as? String).flatMap { Data(hexString: $0) } }
        let formatter = ISO8601DateFormatter()
        let assertions = (json["assertions"] as? [[String: Any]] ?? []).map { entry in
            Assertion(assertion: Data(base64Encoded: entry["assertion"] as! String)!,
                      clientData: Data(base64Encoded: entry["client_data"] as! String)!,
                      counterBefore: UInt32(entry["counter_before"] as! Int),
                      counterAfter: UInt32(entry["counter_after"] as! Int))
        }
        return AppAttestFixture(
            name: name,
            appID: AppID(json["app_id"] as! String)!,
            keyID: base64("key_id"),
            clientDataHash: hex("client_data_hash"),
            attestation: base64("attestation"),
            verifyAt: (json["verify_at"] as? String).flatMap { formatter.date(from: $0) },
            environment: (json["environment"] as? String).flatMap(AppAttestEnvironment.init(rawValue:)),
            publicKey: hex("public_key"),
            assertions: assertions)
    }

    func attestationVerifier(appIDs: [AppID]? = nil, environment: AppAttestEnvironment? = nil) -> AttestationVerifier {
        AttestationVerifier(appIDs: appIDs ?? [appID], environment: environment ?? self.environment!)
    }

    /// Verifies the attestation as captured, at its fixed time.
    func verifyAttestation(_ object: Data? = nil, keyID: Data? = nil, clientDataHash: Data? = nil, at: Date? = nil,
                           appIDs: [AppID]? = nil, environment: AppAttestEnvironment? = nil) throws(AppAttestFailure) -> VerifiedAttestation {
        try attestationVerifier(appIDs: appIDs, environment: environment)
            .verify(attestationObject: object ?? attestation!, keyID: keyID ?? self.keyID!, clientDataHash: clientDataHash ?? self.clientDataHash!,
                    at: at ?? verifyAt!)
    }
}

extension Data {
    /// A copy with the byte at `index` XORed with `mask`.
    func flipping(_ index: Int, mask: UInt8 = 0x01) -> Data {
        var copy = self
        copy[copy.startIndex + index] ^= mask
        return copy
    }
}
