import AppAttest
import Foundation
import TwoBitsCrypto
#if canImport(Glibc)
import Glibc
import WireFormats
#endif

// AppAttestBench: CPU per App Attest attestation and per assertion verification, on a real capture, and per
// receipt verification on a sandbox receipt (Tests/Fixtures/AppAttest/sandbox-receipts.json: Apple's encoding,
// a three-certificate chain; "receipt_us", target ≤ 1000 µs, the intermediate remembered as for attestations).
//
// usage: AppAttestBench [--seconds N] [--fixture FILE]
//
// Verifies the fixture's attestation (chain to Apple's root at the capture's time, nonce, key id, …)
// and its assertion, each in a loop for N seconds of this thread's CPU time, and prints one JSON object:
//   {"fixture":...,"attestation_us":...,"attestations":...,"assertion_us":...,"assertions":...,
//    "assertion_parsed_key_us":...}
// assertion_us parses the stored key from its 65 bytes every time (what a server holding bytes does);
// assertion_parsed_key_us reuses a parsed P256PublicKey. Targets: attestation ≤ 1000 µs, assertion ≤ 150 µs.

var seconds = 2.0
var fixturePath = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().appendingPathComponent("Tests/Fixtures/AppAttest/veehaitch-ios-14.4.json").path
var arguments = Array(CommandLine.arguments.dropFirst())
func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("AppAttestBench: \(message)\nusage: AppAttestBench [--seconds N] [--fixture FILE]\n".utf8))
    exit(2)
}
while !arguments.isEmpty {
    let flag = arguments.removeFirst()
    guard let value = arguments.first else { fail("\(flag) needs a value") }
    arguments.removeFirst()
    switch flag {
    case "--seconds":
        guard let s = Double(value), s > 0, s <= 600 else { fail("--seconds must be 0-600") }
        seconds = s
    case "--fixture": fixturePath = value
    default: fail("unknown option \(flag)")
    }
}

guard let data = FileManager.default.contents(atPath: fixturePath),
      let json = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
      let appID = (json["app_id"] as? String).flatMap(AppID.init),
      let object = (json["attestation"] as? String).flatMap({ Data(base64Encoded: $0) }),
      let keyID = (json["key_id"] as? String).flatMap({ Data(base64Encoded: $0) }),
      let clientDataHash = (json["client_data_hash"] as? String).flatMap({ Data(hexString: $0) }),
      let at = (json["verify_at"] as? String).flatMap({ ISO8601DateFormatter().date(from: $0) }),
      let environment = (json["environment"] as? String).flatMap(AppAttestEnvironment.init(rawValue:)),
      let first = (json["assertions"] as? [[String: Any]])?.first,
      let assertion = (first["assertion"] as? String).flatMap({ Data(base64Encoded: $0) }),
      let clientData = (first["client_data"] as? String).flatMap({ Data(base64Encoded: $0) }) else {
    fail("cannot read a fixture with an attestation and an assertion from \(fixturePath)")
}

let attestations = AttestationVerifier(appIDs: [appID], environment: environment)
let assertions = AssertionVerifier()
// Both must verify: a fast verifier that refuses is no benchmark.
let verified: VerifiedAttestation
do {
    verified = try attestations.verify(attestationObject: object, keyID: keyID, clientDataHash: clientDataHash, at: at)
    _ = try assertions.verify(assertion: assertion, clientData: clientData, publicKey: verified.publicKey, appID: appID, storedCounter: 0)
} catch {
    FileHandle.standardError.write(Data("AppAttestBench: the fixture does not verify: \(error)\n".utf8))
    exit(1)
}
let parsedKey = try! P256PublicKey(uncompressedPoint: verified.publicKey)
let clientDataHashOfAssertion = SHA256Digest.hash(clientData)

func threadCPUSeconds() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

/// Runs `body` for a quarter of the budget to warm up, then for the budget; returns (µs per call, calls).
func measure(_ budget: Double, _ body: () -> Void) -> (Double, Int) {
    let warm = threadCPUSeconds()
    while threadCPUSeconds() - warm < budget / 4 { body() }
    let start = threadCPUSeconds()
    var calls = 0
    while true {
        for _ in 0..<16 { body() }
        calls += 16
        let elapsed = threadCPUSeconds() - start
        if elapsed >= budget { return (elapsed / Double(calls) * 1e6, calls) }
    }
}

let (attestationMicros, attestationCount) = measure(seconds) {
    _ = try? attestations.verify(attestationObject: object, keyID: keyID, clientDataHash: clientDataHash, at: at)
}
let (assertionMicros, assertionCount) = measure(seconds) {
    _ = try? assertions.verify(assertion: assertion, clientData: clientData, publicKey: verified.publicKey, appID: appID, storedCounter: 0)
}
let (parsedMicros, _) = measure(seconds) {
    _ = try? assertions.verify(assertion: assertion, clientDataHash: clientDataHashOfAssertion, publicKey: parsedKey, appID: appID, storedCounter: 0)
}
// Where an attestation's time goes: the parts measured alone.
let x5c = (try! CBORDecoder().decode(object))["attStmt"]!["x5c"]!.arrayValue!.map { $0.bytesValue! }
let leaf = try! X509Certificate(der: x5c[0])
let intermediate = try! X509Certificate(der: x5c[1])
let part = seconds / 4
let (cborMicros, _) = measure(part) { _ = try? CBORDecoder().decode(object) }
let (parseMicros, _) = measure(part) { _ = try? X509Certificate(der: x5c[0]); _ = try? X509Certificate(der: x5c[1]) }
let (chainMicros, _) = measure(part) { try? AppleRootCertificates.appAttestationVerifier.verify(leaf: leaf, intermediates: [intermediate], at: at) }
let (keyMicros, _) = measure(part) { _ = try? P256PublicKey(uncompressedPoint: verified.publicKey) }

// A refreshed receipt: CMS (BER) parse, signature, chain (intermediate remembered), payload, app id, key.
let receiptPath = URL(fileURLWithPath: fixturePath).deletingLastPathComponent().appendingPathComponent("sandbox-receipts.json").path
guard let receiptData = FileManager.default.contents(atPath: receiptPath),
      let receiptJSON = try? JSONSerialization.jsonObject(with: receiptData) as? [String: Any],
      let receiptAppID = receiptJSON["app_id"] as? String,
      let receiptKey = (receiptJSON["public_key"] as? String).flatMap({ Data(hexString: $0) }),
      let receiptAt = (receiptJSON["verify_at"] as? String).flatMap({ ReceiptTime.parse(Data($0.utf8)) }),
      let receiptRoot = (receiptJSON["root_pem"] as? String).flatMap({ try? X509Certificate(pem: $0) }),
      let receipt = (receiptJSON["receipt"] as? String).flatMap({ Data(base64Encoded: $0) }) else {
    fail("cannot read the receipt fixture \(receiptPath)")
}
let receipts = try! ReceiptVerifier(root: receiptRoot)
do { _ = try receipts.verify(receipt, appID: receiptAppID, publicKey: receiptKey, at: receiptAt, freshness: nil) } catch {
    FileHandle.standardError.write(Data("AppAttestBench: the receipt fixture does not verify: \(error)\n".utf8))
    exit(1)
}
let (receiptMicros, receiptCount) = measure(seconds) {
    _ = try? receipts.verify(receipt, appID: receiptAppID, publicKey: receiptKey, at: receiptAt, freshness: nil)
}

let signedReceipt = try! CMSSignedData(receipt)
let receiptSigner = signedReceipt.signerCertificate!
let receiptIntermediates = signedReceipt.certificates.filter { !$0.hasSameDER(as: receiptSigner) && $0.subject != $0.issuer }
let (cmsParseMicros, _) = measure(part) { _ = try? CMSSignedData(receipt) }
let (cmsSignatureMicros, _) = measure(part) { try? signedReceipt.verifySignature() }
let (receiptChainMicros, _) = measure(part) { try? receipts.chainVerifier.verify(leaf: receiptSigner, intermediates: receiptIntermediates, at: receiptAt) }
let (payloadMicros, _) = measure(part) { _ = try? ReceiptPayload(signedReceipt.content) }

func rounded(_ x: Double) -> Double { (x * 10).rounded() / 10 }
print("{\"fixture\":\"\((fixturePath as NSString).lastPathComponent)\",\"attestation_us\":\(rounded(attestationMicros)),\"attestations\":\(attestationCount),"
      + "\"assertion_us\":\(rounded(assertionMicros)),\"assertions\":\(assertionCount),\"assertion_parsed_key_us\":\(rounded(parsedMicros)),"
      + "\"parts_us\":{\"cbor_decode\":\(rounded(cborMicros)),\"x5c_parse\":\(rounded(parseMicros)),\"chain_verify\":\(rounded(chainMicros)),"
      + "\"key_from_point\":\(rounded(keyMicros))},\"receipt_us\":\(rounded(receiptMicros)),\"receipts\":\(receiptCount),"
      + "\"receipt_parts_us\":{\"cms_parse\":\(rounded(cmsParseMicros)),\"signature\":\(rounded(cmsSignatureMicros)),\"chain_verify\":\(rounded(receiptChainMicros)),"
      + "\"payload\":\(rounded(payloadMicros))}}")
