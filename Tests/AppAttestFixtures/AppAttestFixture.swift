import AppAttestFormats
import Foundation
import WireFormats

/// One real capture from Tests/Fixtures/AppAttest (see its README for the sources), read with App Attest's formats
/// alone: the formats' suites and the verifiers' share it.
public struct AppAttestFixture: CustomStringConvertible, Sendable {
    public struct Assertion: Sendable {
        public let assertion: Data
        public let clientData: Data
        public let counterBefore: UInt32
        public let counterAfter: UInt32
    }

    public let name: String
    public let appID: AppID
    public let keyID: Data?
    public let clientDataHash: Data?
    public let attestation: Data?
    public let verifyAt: Date?
    public let environment: AppAttestEnvironment?
    public let publicKey: Data?
    public let assertions: [Assertion]

    public var description: String { name }

    public static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fixtures/AppAttest")

    public static let names: [String] = {
        let files = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return files.filter { $0.hasSuffix(".json") }.map { String($0.dropLast(5)) }.sorted()
    }()

    /// The fixtures with an attestation.
    public static let attestationNames: [String] = names.filter { load($0).attestation != nil }

    public static func load(_ name: String) -> AppAttestFixture {
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
}

extension Data {
    /// A copy with the byte at `index` XORed with `mask`.
    public func flipping(_ index: Int, mask: UInt8 = 0x01) -> Data {
        var copy = self
        copy[copy.startIndex + index] ^= mask
        return copy
    }
}
