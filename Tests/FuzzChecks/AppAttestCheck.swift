import AppAttest
import Foundation
import TwoBitsCrypto
import WireFormats

/// App Attest's parsers and verifiers on hostile bytes. The first byte selects: even, the rest is an
/// attestation object; odd, an assertion. Both go through the strict CBOR decoder (a value, or a
/// CBORError at an offset inside the input) and the verifier, set up for one real capture
/// (Tests/Fixtures/AppAttest/bas-d-appattest.json) at a time inside its validity: whatever verifies
/// must carry the capture's own authenticator data and certificates (only the receipt, which Apple
/// checks, may differ), and an assertion that verifies must carry the capture's authenticator data.
enum AppAttestCheck {
    /// Bytes as arrays: LeakSanitizer cannot follow Data's tagged storage pointer from a static.
    struct Fixture: Sendable {
        let appID: AppID
        let keyID: [UInt8]
        let clientDataHash: [UInt8]
        let at: Date
        let publicKey: [UInt8]
        let clientData: [UInt8]
        let authData: [UInt8]
        let x5c: [[UInt8]]
        let assertionAuthData: [UInt8]
    }

    static let fixture: Fixture = {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/AppAttest/bas-d-appattest.json").path
        guard let bytes = try? FileBytes.read(path), case .object(let json)? = try? JSONValue.parse(bytes),
              case .string(let app)? = json["app_id"], let appID = AppID(app),
              case .string(let key)? = json["key_id"], let keyID = Data(base64Encoded: key),
              case .string(let hash)? = json["client_data_hash"], let clientDataHash = Data(hexString: hash),
              case .string(let object)? = json["attestation"], let attestation = Data(base64Encoded: object),
              case .string(let at)? = json["verify_at"], let time = ISO8601DateFormatter().date(from: at),
              case .array(let assertions)? = json["assertions"], case .object(let first)? = assertions.first,
              case .string(let a)? = first["assertion"], let assertion = Data(base64Encoded: a),
              case .string(let cd)? = first["client_data"], let clientData = Data(base64Encoded: cd) else {
            fatalError("cannot read the App Attest fixture \(path)")
        }
        let decoded = try! CBORDecoder().decode(attestation)
        let verified = try! AttestationVerifier(appIDs: [appID], environment: .development)
            .verify(attestationObject: attestation, keyID: keyID, clientDataHash: clientDataHash, at: time)
        return Fixture(appID: appID, keyID: [UInt8](keyID), clientDataHash: [UInt8](clientDataHash), at: time, publicKey: [UInt8](verified.publicKey),
                       clientData: [UInt8](clientData), authData: [UInt8](decoded["authData"]!.bytesValue!),
                       x5c: decoded["attStmt"]!["x5c"]!.arrayValue!.map { [UInt8]($0.bytesValue!) },
                       assertionAuthData: [UInt8]((try! CBORDecoder().decode(assertion))["authenticatorData"]!.bytesValue!))
    }()

    static let attestations = AttestationVerifier(appIDs: [fixture.appID], environment: .development)

    static func check(_ input: [UInt8]) -> String? {
        guard let selector = input.first else { return nil }
        let payload = Data(input.dropFirst())
        var decoded: CBORValue?
        do { decoded = try CBORDecoder().decode(payload) } catch {
            guard error.offset >= 0, error.offset <= payload.count else { return "CBORError offset \(error.offset) outside \(payload.count) bytes" }
        }
        let f = fixture
        if selector & 1 == 0 {
            guard (try? attestations.verify(attestationObject: payload, keyID: Data(f.keyID), clientDataHash: Data(f.clientDataHash), at: f.at)) != nil else { return nil }
            guard let decoded, decoded["authData"]?.bytesValue == Data(f.authData),
                  decoded["attStmt"]?["x5c"]?.arrayValue?.map({ $0.bytesValue }) == f.x5c.map({ Data($0) }) else {
                return "an attestation other than the capture verified"
            }
        } else {
            guard (try? AssertionVerifier().verify(assertion: payload, clientData: Data(f.clientData), publicKey: Data(f.publicKey), appID: f.appID,
                                                   storedCounter: 0)) != nil else { return nil }
            guard decoded?["authenticatorData"]?.bytesValue == Data(f.assertionAuthData) else { return "an assertion other than the capture verified" }
        }
        return nil
    }
}
