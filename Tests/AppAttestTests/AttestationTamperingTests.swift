import AppAttest
import AppAttestFixtures
import Foundation
import Testing
import TwoBitsCrypto

/// One byte changed in a real attestation object: refused, with the reason the changed part calls for.
@Suite struct AttestationTamperingTests {
    struct Layout {
        let object: Data
        let authData: Range<Int>
        let leaf: Range<Int>
        let intermediate: Range<Int>
        let receipt: Range<Int>

        init(_ fixture: AppAttestFixture) {
            let object = fixture.attestation!
            self.object = object
            let decoded = try! CBORDecoder().decode(object)
            func range(_ bytes: Data) -> Range<Int> {
                let found = object.range(of: bytes)!
                return (found.lowerBound - object.startIndex)..<(found.upperBound - object.startIndex)
            }
            let x5c = decoded["attStmt"]!["x5c"]!.arrayValue!.map { $0.bytesValue! }
            authData = range(decoded["authData"]!.bytesValue!)
            leaf = range(x5c[0])
            intermediate = range(x5c[1])
            receipt = range(decoded["attStmt"]!["receipt"]!.bytesValue!)
        }
    }

    static func reason(_ fixture: AppAttestFixture, _ object: Data) -> AppAttestFailure? {
        do {
            _ = try fixture.verifyAttestation(object)
            return nil
        } catch {
            return error
        }
    }

    @Test func namedPositionsFailWithTheirReason() {
        let fixture = AppAttestFixture.load("veehaitch-ios-14.3")
        let layout = Layout(fixture)
        let a = layout.authData.lowerBound
        // authData: every byte is hashed into the nonce the certificate carries.
        for (offset, what) in [(0, "rpIdHash"), (31, "rpIdHash end"), (32, "flags (UP)"), (36, "counter"), (37, "aaguid"),
                               (55, "credentialId"), (90, "COSE key x"), (layout.authData.count - 1, "COSE key y, last byte")] {
            #expect(Self.reason(fixture, layout.object.flipping(a + offset))?.reason == .nonceMismatch, "authData \(what)")
        }
        // The AT flag cleared: the credential data cannot be read as such.
        #expect(Self.reason(fixture, layout.object.flipping(a + 32, mask: 0x40))?.reason == .badFormat)
        // Certificates: a changed byte breaks a signature or the DER, either way the chain.
        for index in [layout.leaf.lowerBound + 200, layout.leaf.upperBound - 10, layout.intermediate.lowerBound + 150, layout.intermediate.upperBound - 5] {
            #expect(Self.reason(fixture, layout.object.flipping(index))?.reason == .badChain, "certificate byte \(index)")
        }
        // The format's own text.
        let fmt = layout.object.range(of: Data("apple-appattest".utf8))!.lowerBound - layout.object.startIndex
        let failure = Self.reason(fixture, layout.object.flipping(fmt))
        #expect(failure?.reason == .badFormat)
        #expect(failure?.step == .format)
        // The receipt is Apple's to check later (it chains to Apple Root CA - G3): a changed byte there is not refused here.
        #expect(Self.reason(fixture, layout.object.flipping(layout.receipt.lowerBound + 100)) == nil)
    }

    /// Every byte outside the receipt, two bit flips each: never accepted, never a crash.
    @Test(arguments: ["veehaitch-ios-14.2", "uebelack-attestation-production", "bas-d-appattest"])
    func everyByteOutsideTheReceiptIsCovered(name: String) {
        let fixture = AppAttestFixture.load(name)
        let layout = Layout(fixture)
        var counts: [AppAttestFailure.Reason: Int] = [:]
        for index in 0..<layout.object.count where !layout.receipt.contains(index) {
            for mask: UInt8 in [0x01, 0x80] {
                guard let failure = Self.reason(fixture, layout.object.flipping(index, mask: mask)) else {
                    Issue.record("\(name): flipping byte \(index) with \(mask) still verified")
                    continue
                }
                counts[failure.reason, default: 0] += 1
                if layout.authData.contains(index) {
                    #expect([.nonceMismatch, .badFormat].contains(failure.reason), "authData byte \(index - layout.authData.lowerBound): \(failure)")
                } else if layout.leaf.contains(index) || layout.intermediate.contains(index) {
                    #expect([.badChain, .badFormat].contains(failure.reason), "certificate byte \(index): \(failure)")
                } else {
                    #expect(failure.reason == .badFormat, "CBOR structure byte \(index): \(failure)")
                }
            }
        }
        print("\(name): \(counts.map { "\($0.key.rawValue)=\($0.value)" }.sorted().joined(separator: " "))")
    }
}
