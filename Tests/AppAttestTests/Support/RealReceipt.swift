import AppAttest
import Foundation
import TestVectors
import TwoBitsCrypto

/// One receipt captured from a real iPhone (veehaitch/devicecheck-appattest, in
/// ../shared/vectors/app-attest-devicecheck-appattest) with the properties veehaitch's verifier read from it.
struct RealReceipt: CustomStringConvertible, Sendable {
    let file: String
    let index: Int
    let receipt: Data
    let appID: String
    let publicKey: Data
    /// veehaitch's reading: `type`, `creationTime`, `notBefore`, `expirationTime`, `riskMetric`, `token`,
    /// `clientHashBase64`, `environment` (absent when null).
    let properties: [String: String]

    var description: String { "\(file) receipt \(index)" }

    static let folder = "app-attest-devicecheck-appattest"

    /// Every receipt of every capture, in file order; nil when the vectors are absent (the caller skips).
    static func all(for test: String) throws -> [RealReceipt]? {
        guard let files = try TestVectors.files(in: folder, suffix: ".yaml", for: test) else { return nil }
        var receipts: [RealReceipt] = []
        for (name, data) in files {
            let documents = try CaptureDocument.documents(String(decoding: data, as: UTF8.self))
            for (index, document) in documents.filter({ $0["type"] == "receipt" }).enumerated() {
                guard let base64 = document["receiptBase64"], let receipt = Data(base64Encoded: base64),
                      let team = document["teamIdentifier"], let bundle = document["bundleIdentifier"], let pem = document["publicKey"]
                else { throw CaptureDocument.Unreadable(line: 0, text: "\(name): a receipt without receiptBase64, team, bundle or public key") }
                receipts.append(RealReceipt(file: name, index: index + 1, receipt: receipt, appID: "\(team).\(bundle)",
                                            publicKey: try P256PublicKey(pem: pem).uncompressedPoint, properties: document.properties))
            }
        }
        return receipts
    }

    /// A property read as veehaitch printed it (`2020-11-21T22:13:02.796Z`), by Foundation, not `ReceiptTime`.
    func time(_ key: String) -> Date? {
        guard let text = properties[key] else { return nil }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.date(from: text)
    }
}
