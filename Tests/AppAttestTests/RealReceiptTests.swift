import AppAttest
import AppAttestFixtures
import Foundation
import Sandbox
import Testing
import TwoBitsCrypto
import WireFormats

/// The twenty receipts veehaitch captured from real iPhones (iOS 14.2 to 14.4; ../shared/vectors, skipped when
/// absent) through `ReceiptVerifier` with Apple Root CA - G3 as compiled in: each verifies at its creation with
/// the fields veehaitch's verifier read, is refused past its expiration and under another root, and one broken
/// variant of it per step is refused at that step.
@Suite("Real App Attest receipts")
struct RealReceiptTests {
    static let receiptCount = 20
    /// A generated root whose certificates are valid while the captures were made (November 2020 to January 2021).
    let generated = ReceiptAuthority(now: Date(timeIntervalSince1970: 1_608_000_000))

    func step(_ body: () throws -> Void) -> ReceiptStep? {
        do { try body(); return nil } catch let failure as ReceiptFailure { return failure.step } catch {
            Issue.record("not a ReceiptFailure: \(error)")
            return nil
        }
    }

    func creation(_ receipt: RealReceipt) throws -> Date { try #require(receipt.time("creationTime"), "\(receipt): creationTime") }
    func expiration(_ receipt: RealReceipt) throws -> Date { try #require(receipt.time("expirationTime"), "\(receipt): expirationTime") }

    /// The payload's fields in order, as Apple wrote them.
    func fields(_ receipt: RealReceipt) throws -> ReceiptPayloadFields {
        var outer = DERReader(try CMSSignedData(receipt.receipt).content)
        var set = try outer.read(tag: 0x31)
        var fields = ReceiptPayloadFields()
        while !set.isAtEnd {
            var sequence = try set.read(tag: 0x30)
            let type = try sequence.readSmallInteger()
            _ = try sequence.readSmallInteger()
            fields.fields.append((type, try sequence.readOctetString()))
        }
        return fields
    }

    @Test func eachVerifiesAtItsCreationWithTheCapturesFields() throws {
        guard let receipts = try RealReceipt.all(for: "RealReceiptTests/eachVerifiesAtItsCreationWithTheCapturesFields") else { return }
        #expect(receipts.count == Self.receiptCount)
        #expect(Set(receipts.map(\.file)).count == 7)
        var types: [ReceiptType: Int] = [:]
        for receipt in receipts {
            let created = try creation(receipt)
            // As a receipt just received from Apple: step 5 runs too.
            let verified = try ReceiptVerifier().verify(receipt.receipt, appID: receipt.appID, publicKey: receipt.publicKey, at: created,
                                                        freshness: ReceiptVerifier.freshness)
            types[verified.type, default: 0] += 1
            #expect(verified.type.rawValue == receipt.properties["type"], "\(receipt)")
            #expect(verified.appID == receipt.appID, "\(receipt)")
            #expect(abs(verified.creation.timeIntervalSince(created)) < 0.0005, "\(receipt)")
            #expect(abs(verified.expiration.timeIntervalSince(try expiration(receipt))) < 0.0005, "\(receipt)")
            let notBefore = receipt.time("notBefore")
            #expect((verified.notBefore == nil) == (notBefore == nil), "\(receipt): notBefore")
            if let notBefore, let read = verified.notBefore { #expect(abs(read.timeIntervalSince(notBefore)) < 0.0005, "\(receipt)") }
            #expect(verified.riskMetric == receipt.properties["riskMetric"].flatMap { Int($0) }, "\(receipt): riskMetric")
            #expect(verified.token == receipt.properties["token"], "\(receipt)")
            // The ATTEST receipt's field 4 is the client data hash; a RECEIPT's is Apple's mangled copy, byte for byte.
            #expect(verified.clientHash == receipt.properties["clientHashBase64"].flatMap { Data(base64Encoded: $0) }, "\(receipt)")
            #expect(verified.environment == receipt.properties["environment"], "\(receipt)")
            #expect(verified.attestedPublicKey == receipt.publicKey, "\(receipt)")
        }
        #expect(types == [.attest: 7, .receipt: 13])
        print("real receipts: \(receipts.count) verified at their creation (\(types[.attest] ?? 0) ATTEST, \(types[.receipt] ?? 0) RECEIPT)")
    }

    /// Apple drops the milliseconds' trailing zeros: two of the twenty carry `.46Z` / `.37Z` times (refused at the
    /// payload step before TwoBits accepted 0-9 fraction digits).
    @Test func someCarryTimesWithTrailingZerosDropped() throws {
        guard let receipts = try RealReceipt.all(for: "RealReceiptTests/someCarryTimesWithTrailingZerosDropped") else { return }
        var short: [String] = []
        for receipt in receipts {
            let times = try fields(receipt).fields.filter { [12, 19, 21].contains($0.type) }
            if times.contains(where: { $0.value.count != 24 }) { short.append(receipt.description) }
        }
        #expect(short == ["ios-14.2.yaml receipt 3", "ios-14.4-beta-2.yaml receipt 2"])
    }

    @Test func eachIsRefusedPastItsExpiration() throws {
        guard let receipts = try RealReceipt.all(for: "RealReceiptTests/eachIsRefusedPastItsExpiration") else { return }
        for receipt in receipts {
            let expires = try expiration(receipt)
            // Field 21 to the millisecond: still valid at that instant (the signer's certificate outlives it).
            #expect(step { _ = try ReceiptVerifier().verify(receipt.receipt, appID: receipt.appID, publicKey: receipt.publicKey, at: expires, freshness: nil) } == nil,
                    "\(receipt)")
            #expect(step { _ = try ReceiptVerifier().verify(receipt.receipt, appID: receipt.appID, publicKey: receipt.publicKey, at: expires + 1, freshness: nil) }
                    == .expiration, "\(receipt)")
        }
    }

    @Test func eachIsRefusedUnderAnotherRoot() throws {
        guard let receipts = try RealReceipt.all(for: "RealReceiptTests/eachIsRefusedUnderAnotherRoot") else { return }
        let others = [("a generated root", generated.verifier),
                      ("the App Attestation root", ReceiptVerifier(chainVerifier: AppleRootCertificates.appAttestationVerifier))]
        for receipt in receipts {
            let created = try creation(receipt)
            for (name, verifier) in others {
                #expect(step { _ = try verifier.verify(receipt.receipt, appID: receipt.appID, publicKey: receipt.publicKey, at: created, freshness: nil) } == .chain,
                        "\(receipt) under \(name)")
            }
        }
    }

    @Test func aBrokenVariantOfEachIsRefusedAtEachStep() throws {
        guard let receipts = try RealReceipt.all(for: "RealReceiptTests/aBrokenVariantOfEachIsRefusedAtEachStep") else { return }
        let apple = ReceiptVerifier()
        let otherKey = P256PrivateKey.generate().publicKey.uncompressedPoint
        for receipt in receipts {
            let created = try creation(receipt)
            let real = try fields(receipt)
            // The real payload signed again under the generated root verifies: only the broken field makes a difference.
            let resigned = try generated.verifier.verify(generated.sign(payload: real.der), appID: receipt.appID, publicKey: receipt.publicKey,
                                                              at: created, freshness: nil)
            #expect(resigned == (try apple.verify(receipt.receipt, appID: receipt.appID, publicKey: receipt.publicKey, at: created, freshness: nil)), "\(receipt)")
            for expected in ReceiptStep.allCases {
                var bytes = receipt.receipt
                var verifier = apple
                var appID = receipt.appID
                var publicKey = receipt.publicKey
                var time = created
                var freshness: TimeInterval?
                switch expected {
                case .container: bytes.append(0)
                case .signature:
                    let token = try #require(receipt.properties["token"]).utf8.prefix(16)
                    let at = try #require(bytes.range(of: Data(token)), "\(receipt): token not found").lowerBound
                    bytes[at] ^= 0x01
                case .chain: verifier = generated.verifier  // another root
                case .payload:
                    var broken = real
                    broken.set(12, Data((receipt.properties["creationTime"]!.dropLast() + "0000000Z").utf8))  // ten fraction digits
                    bytes = generated.sign(payload: broken.der)
                    verifier = generated.verifier
                case .appID: appID = "6MURL8TA57.de.vincent-haupert.other"
                case .freshness:
                    time = created + ReceiptVerifier.freshness + 1
                    freshness = ReceiptVerifier.freshness
                case .expiration: time = try expiration(receipt) + 1
                case .publicKey: publicKey = otherKey
                }
                #expect(step { _ = try verifier.verify(bytes, appID: appID, publicKey: publicKey, at: time, freshness: freshness) } == expected,
                        "\(receipt), broken at \(expected)")
            }
        }
    }

    /// The ATTEST receipts inside the real attestations of Tests/Fixtures/AppAttest (no vectors needed) verify at
    /// their creation, for the attested key.
    @Test(arguments: AppAttestFixture.attestationNames)
    func theAttestationFixturesReceiptsVerify(name: String) throws {
        let fixture = AppAttestFixture.load(name)
        let attestation = try fixture.verifyAttestation()
        let created = try ReceiptPayload(try CMSSignedData(attestation.receipt).content).creation
        let verified = try ReceiptVerifier().verify(attestation.receipt, appID: fixture.appID.description, publicKey: attestation.publicKey,
                                                    at: created, freshness: nil)
        #expect(verified.type == .attest)
        #expect(verified.clientHash == fixture.clientDataHash)
    }
}
