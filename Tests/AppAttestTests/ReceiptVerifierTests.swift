import AppAttest
import Foundation
@testable import Sandbox
import Testing
import TwoBitsCrypto
import WireFormats

/// Receipts as the sandbox makes them (Apple's encoding: BER, indefinite lengths, 1,000-byte chunks, three
/// certificates), checked by `ReceiptVerifier`: they verify, and each broken variant is refused at its step.
@Suite("App Attest receipts")
struct ReceiptVerifierTests {
    let now = Date()
    let authority = AppAttestAuthority()
    let appID = AppID(teamID: "TEAMID1234", bundleID: "com.example.receipts")
    var receipts: ReceiptAuthority { authority.receiptAuthority }
    var verifier: ReceiptVerifier { receipts.verifier }

    /// An attested key and its ATTEST receipt.
    func attested(deviceID: String? = nil) -> (key: SimulatedAppAttestKey, receipt: Data) {
        let key = SimulatedAppAttestKey(appID: appID, environment: .development, validationCategory: nil, bundleVersion: nil, deviceID: deviceID)
        _ = key.attestationObject(clientDataHash: SHA256Digest.hash(Data("challenge".utf8)), fault: nil, authority: authority, now: now)
        return (key, key.receiptState.withLock { $0.lastReceipt }!)
    }

    /// The fields of a well-formed RECEIPT for `key`, to break one at a time.
    func receiptFields(_ key: SimulatedAppAttestKey, metric: String = "3") -> ReceiptPayloadFields {
        let certificate = key.receiptState.withLock { $0.credentialCertificate }!
        return ReceiptPayloadFields([
            (17, Data(metric.utf8)), (6, Data("RECEIPT".utf8)), (2, Data(appID.description.utf8)), (3, certificate),
            (4, Data(repeating: 0x3F, count: 54)), (5, Data(key.receiptToken.utf8)), (7, Data("sandbox".utf8)),
            (12, Data(ReceiptTime.format(now).utf8)), (19, Data(ReceiptTime.format(now + 86_400).utf8)),
            (21, Data(ReceiptTime.format(now + 90 * 86_400).utf8)),
        ])
    }

    func step(_ body: () throws -> Void) -> ReceiptStep? {
        do { try body(); return nil } catch let failure as ReceiptFailure { return failure.step } catch {
            Issue.record("not a ReceiptFailure: \(error)")
            return nil
        }
    }

    @Test func attestReceiptVerifies() throws {
        let (key, receipt) = attested()
        // Apple's encoding: BER with an indefinite length at the top.
        #expect(receipt.prefix(2) == Data([0x30, 0x80]))
        let verified = try verifier.verify(receipt, appID: appID.description, publicKey: key.publicKey, at: now, freshness: ReceiptVerifier.freshness)
        #expect(verified.type == .attest)
        #expect(verified.appID == appID.description)
        #expect(verified.environment == "sandbox")
        #expect(verified.notBefore == nil && verified.riskMetric == nil)
        #expect(verified.token.count == 88 && verified.token == key.receiptToken)
        #expect(verified.clientHash == SHA256Digest.hash(Data("challenge".utf8)))
        #expect(verified.attestedPublicKey == key.publicKey)
        #expect(abs(verified.expiration.timeIntervalSince(verified.creation) - 90 * 86_400) < 0.001)
        #expect(abs(verified.creation.timeIntervalSince(now)) < 0.001)
    }

    @Test func refreshedReceiptCarriesTheMetricAndNotBefore() throws {
        let (key, _) = attested()
        let refreshed = try #require(key.refreshedReceipt(metric: 7, authority: receipts, now: now))
        let verified = try verifier.verify(refreshed, appID: appID.description, publicKey: key.publicKey, at: now, freshness: 300)
        #expect(verified.type == .receipt)
        #expect(verified.riskMetric == 7)
        #expect(verified.notBefore.map { abs($0.timeIntervalSince(verified.creation) - 86_400) < 0.001 } == true)
        // Field 4 mangled as Apple's: never 32 bytes, never the hash.
        #expect(verified.clientHash.count == 54)
    }

    @Test func aPayloadLongerThanOneChunkIsJoinedAndUnknownFieldsIgnored() throws {
        let (key, _) = attested()
        var fields = receiptFields(key)
        fields.fields.insert((99, Data(repeating: 0x41, count: 2_500)), at: 3)
        let receipt = receipts.sign(payload: fields.der)
        // Three chunks of the constructed OCTET STRING at least.
        #expect(fields.der.count > 3_000)
        let verified = try verifier.verify(receipt, appID: appID.description, publicKey: key.publicKey, at: now, freshness: nil)
        #expect(verified.riskMetric == 3)
    }

    @Test func anyFieldOrderVerifies() throws {
        let (key, _) = attested()
        var fields = receiptFields(key)
        fields.fields.reverse()
        let verified = try verifier.verify(receipts.sign(payload: fields.der), appID: appID.description, publicKey: key.publicKey, at: now, freshness: nil)
        #expect(verified.type == .receipt)
    }

    @Test func aDefiniteLengthReEncodingStillVerifies() throws {
        let (key, receipt) = attested()
        let der = try CMSSignedData(receipt).derEncoding()
        #expect(der != receipt)
        #expect(der.prefix(2) == Data([0x30, 0x82]))
        let verified = try verifier.verify(der, appID: appID.description, publicKey: key.publicKey, at: now, freshness: nil)
        #expect(verified.type == .attest)
    }

    @Test func signedAttributesInBothFormsVerify() throws {
        let (key, _) = attested()
        let payload = receiptFields(key).der
        for form in [ReceiptSignatureForm.signedAttributes, .signedAttributesOverPayload] {
            let receipt = receipts.sign(payload: payload, form: form)
            let verified = try verifier.verify(receipt, appID: appID.description, publicKey: key.publicKey, at: now, freshness: nil)
            #expect(verified.riskMetric == 3, "\(form)")
        }
    }

    @Test func aForgedSignedAttributeReceiptIsRefused() {
        let (key, _) = attested()
        let payload = receiptFields(key).der
        // Signed over the payload (the 2020 quirk) but the digest attribute vouches for other content.
        let forged = receipts.sign(payload: payload, form: .signedAttributesOverPayload, messageDigest: SHA256Digest.hash(Data("other".utf8)))
        #expect(step { _ = try verifier.verify(forged, appID: appID.description, publicKey: key.publicKey, at: now, freshness: nil) } == .signature)
        // RFC 5652's form with a digest that is not the payload's: OpenSSL refuses it, and so does the quirk's path.
        let standard = receipts.sign(payload: payload, form: .signedAttributes, messageDigest: SHA256Digest.hash(Data("other".utf8)))
        #expect(step { _ = try verifier.verify(standard, appID: appID.description, publicKey: key.publicKey, at: now, freshness: nil) } == .signature)
    }

    @Test func aSignerWithoutTheReceiptMarkerIsRefusedAtTheChain() {
        let (key, _) = attested()
        let unmarked = ReceiptAuthority(now: now, signerMarker: false)
        let receipt = unmarked.sign(payload: receiptFields(key).der)
        #expect(step { _ = try unmarked.verifier.verify(receipt, appID: appID.description, publicKey: key.publicKey, at: now, freshness: nil) } == .chain)
    }

    @Test func aFlippedPayloadByteIsRefusedAtTheSignature() throws {
        let (key, receipt) = attested()
        var bytes = [UInt8](receipt)
        let token = [UInt8](key.receiptToken.utf8)
        let at = try #require(bytes.indices.first { bytes[$0..<min($0 + token.count, bytes.count)].elementsEqual(token) })
        bytes[at + 10] ^= 0x01
        #expect(step { _ = try verifier.verify(Data(bytes), appID: appID.description, publicKey: key.publicKey, at: now, freshness: nil) } == .signature)
    }

    @Test func anotherAppIDIsRefused() {
        let (key, receipt) = attested()
        #expect(step { _ = try verifier.verify(receipt, appID: "TEAMID1234.com.example.other", publicKey: key.publicKey, at: now, freshness: nil) } == .appID)
    }

    @Test func anotherKeyIsRefused() {
        let (_, receipt) = attested()
        let other = P256PrivateKey.generate().publicKey.uncompressedPoint
        #expect(step { _ = try verifier.verify(receipt, appID: appID.description, publicKey: other, at: now, freshness: nil) } == .publicKey)
        // Without a key at hand, step 6 is skipped.
        #expect(step { _ = try verifier.verify(receipt, appID: appID.description, publicKey: nil, at: now, freshness: nil) } == nil)
    }

    @Test func theWrongRootIsRefusedAtTheChain() {
        let (key, receipt) = attested()
        // Apple's own root (the default) and another sandbox's.
        #expect(step { _ = try ReceiptVerifier().verify(receipt, appID: appID.description, publicKey: key.publicKey, at: now, freshness: nil) } == .chain)
        let stranger = ReceiptAuthority(now: now).verifier
        #expect(step { _ = try stranger.verify(receipt, appID: appID.description, publicKey: key.publicKey, at: now, freshness: nil) } == .chain)
    }

    @Test func aTimeOutsideTheSignersValidityIsRefusedAtTheChain() {
        let (key, receipt) = attested()
        for time in [now - 60 * 86_400, now + ReceiptAuthority.signerValidity] {
            #expect(step { _ = try verifier.verify(receipt, appID: appID.description, publicKey: key.publicKey, at: time, freshness: nil) } == .chain)
        }
    }

    @Test func aStaleReceiptJustReceivedIsRefusedAtFreshness() {
        let (key, receipt) = attested()
        #expect(step { _ = try verifier.verify(receipt, appID: appID.description, publicKey: key.publicKey, at: now + 301, freshness: 300) } == .freshness)
        #expect(step { _ = try verifier.verify(receipt, appID: appID.description, publicKey: key.publicKey, at: now + 299, freshness: 300) } == nil)
        // A stored receipt (no freshness) verifies at any time inside the signer's validity.
        #expect(step { _ = try verifier.verify(receipt, appID: appID.description, publicKey: key.publicKey, at: now + 86_400, freshness: nil) } == nil)
    }

    @Test func aReceiptPastItsExpirationIsRefused() throws {
        let (key, receipt) = attested()
        let expiration = try verifier.verify(receipt, appID: appID.description, publicKey: key.publicKey, at: now, freshness: nil).expiration
        // Field 21 itself still verifies (the signer's certificate outlives it); a second later does not.
        #expect(step { _ = try verifier.verify(receipt, appID: appID.description, publicKey: key.publicKey, at: expiration, freshness: nil) } == nil)
        #expect(step { _ = try verifier.verify(receipt, appID: appID.description, publicKey: key.publicKey, at: expiration + 1, freshness: nil) } == .expiration)
    }

    static let breakages = [
        "duplicate field", "non-decimal metric", "signed metric", "empty metric", "missing metric in a RECEIPT",
        "missing not before in a RECEIPT", "missing app id", "missing token", "missing expiration", "time with ten fraction digits",
        "time of a day that does not exist", "unknown type", "field 3 not a certificate",
    ]

    func breakPayload(_ fields: inout ReceiptPayloadFields, _ name: String) {
        switch name {
        case "duplicate field": fields.fields.append((5, fields[5]!))
        case "non-decimal metric": fields.set(17, Data("3a".utf8))
        case "signed metric": fields.set(17, Data("-3".utf8))
        case "empty metric": fields.set(17, Data())
        case "missing metric in a RECEIPT": fields.set(17, nil)
        case "missing not before in a RECEIPT": fields.set(19, nil)
        case "missing app id": fields.set(2, nil)
        case "missing token": fields.set(5, nil)
        case "missing expiration": fields.set(21, nil)
        case "time with ten fraction digits": fields.set(12, Data("2024-01-02T03:04:05.0000000000Z".utf8))
        case "time of a day that does not exist": fields.set(21, Data("2024-02-30T03:04:05.000Z".utf8))
        case "unknown type": fields.set(6, Data("OTHER".utf8))
        case "field 3 not a certificate": fields.set(3, Data([0x30, 0x03, 0x02, 0x01, 0x01]))
        default: Issue.record("unknown breakage \(name)")
        }
    }

    @Test(arguments: breakages)
    func aMalformedPayloadIsRefusedAtThePayload(name: String) {
        let (key, _) = attested()
        var fields = receiptFields(key)
        breakPayload(&fields, name)
        let receipt = receipts.sign(payload: fields.der)
        #expect(step { _ = try verifier.verify(receipt, appID: appID.description, publicKey: key.publicKey, at: now, freshness: nil) } == .payload, "\(name)")
    }

    @Test func field4OfAnyLengthIsAccepted() throws {
        let (key, _) = attested()
        for length in [0, 1, 32, 54, 200] {
            var fields = receiptFields(key)
            fields.set(4, Data(repeating: 0xAB, count: length))
            let verified = try verifier.verify(receipts.sign(payload: fields.der), appID: appID.description, publicKey: key.publicKey, at: now, freshness: nil)
            #expect(verified.clientHash.count == length)
        }
    }

    @Test func garbageIsRefusedAtTheContainer() {
        for bytes in [Data(), Data([0x30, 0x80, 0, 0]), Data("not a receipt".utf8), Data(repeating: 0x30, count: 100)] {
            #expect(step { _ = try verifier.verify(bytes, appID: appID.description, publicKey: nil, at: now, freshness: nil) } == .container)
        }
        // Bytes after the receipt.
        let (_, receipt) = attested()
        #expect(step { _ = try verifier.verify(receipt + Data([0]), appID: appID.description, publicKey: nil, at: now, freshness: nil) } == .container)
    }

    @Test func theCompiledInRootIsAppleRootCAG3() {
        #expect(SHA256Digest.hash(AppleRootCertificates.appleRootCAG3.der).hexString
            == "63343abfb89a6a03ebb57e9b3f5fa7be7c4f5c756f3017b3a8c488c3653e9179")
        #expect(AppleRootCertificates.appleRootCAG3.subject.contains("Apple Root CA - G3"))
    }
}
