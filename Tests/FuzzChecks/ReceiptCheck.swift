import AppAttest
import Foundation
import TwoBitsCrypto
import WireFormats

/// App Attest receipts on hostile bytes (from Apple, and back from storage). The first byte selects: even,
/// the rest is a receipt for the whole verifier (CMS through OpenSSL, then the payload), set up with the
/// sandbox's receipt root and key of Tests/Fixtures/AppAttest/sandbox-receipts.json at a time inside its
/// validity: whatever verifies must carry one of the fixture's own payloads. Odd, the rest is a payload for
/// the parser alone: it parses or is refused, and what parses is within its bounds.
enum ReceiptCheck {
    /// Bytes as arrays: LeakSanitizer cannot follow Data's tagged storage pointer from a static.
    struct Fixture: Sendable {
        let appID: String
        let publicKey: [UInt8]
        let at: Date
        let payloads: [[UInt8]]
    }

    static let fixture: Fixture = {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/AppAttest/sandbox-receipts.json").path
        guard let bytes = try? FileBytes.read(path), case .object(let json)? = try? JSONValue.parse(bytes),
              case .string(let appID)? = json["app_id"], case .string(let key)? = json["public_key"], let publicKey = Data(hexString: key),
              case .string(let at)? = json["verify_at"], let time = ReceiptTime.parse(Data(at.utf8)) else {
            fatalError("cannot read the receipt fixture \(path)")
        }
        var payloads: [[UInt8]] = []
        for name in ["attest", "receipt", "receipt_signed_attributes", "receipt_signed_attributes_over_payload"] {
            guard case .string(let text)? = json[name], let receipt = Data(base64Encoded: text),
                  let verified = try? verifier.verify(receipt, appID: appID, publicKey: publicKey, at: time, freshness: nil),
                  verified.appID == appID, let signed = try? CMSSignedData(receipt) else {
                fatalError("the fixture's \(name) does not verify")
            }
            payloads.append([UInt8](signed.content))
        }
        return Fixture(appID: appID, publicKey: [UInt8](publicKey), at: time, payloads: payloads)
    }()

    static let verifier: ReceiptVerifier = {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/AppAttest/sandbox-receipts.json").path
        guard let bytes = try? FileBytes.read(path), case .object(let json)? = try? JSONValue.parse(bytes),
              case .string(let pem)? = json["root_pem"], let root = try? X509Certificate(pem: pem) else {
            fatalError("cannot read the receipt fixture's root \(path)")
        }
        return try! ReceiptVerifier(root: root)
    }()

    static func check(_ input: [UInt8]) -> String? {
        guard let selector = input.first else { return nil }
        let rest = Data(input.dropFirst())
        let f = fixture
        if selector & 1 == 0 {
            guard (try? verifier.verify(rest, appID: f.appID, publicKey: Data(f.publicKey), at: f.at, freshness: nil)) != nil else { return nil }
            guard let signed = try? CMSSignedData(rest), f.payloads.contains([UInt8](signed.content)) else {
                return "a receipt with a payload other than the fixture's verified"
            }
        } else {
            guard let payload = try? ReceiptPayload(rest) else { return nil }
            if let metric = payload.riskMetric, metric < 0 { return "a negative metric \(metric)" }
            if payload.type == .receipt, payload.riskMetric == nil || payload.notBefore == nil { return "a RECEIPT without metric or Not Before" }
            if payload.attestedPublicKey.count != 65 { return "an attested key of \(payload.attestedPublicKey.count) bytes" }
        }
        return nil
    }
}
