import AppAttest
import AppAttestFixtures
import Foundation
import Testing
import TwoBitsCrypto

@Suite struct AssertionFixtureTests {
    /// Every fixture's assertions with the key it was made with: the attestation's, or the one published beside it.
    static func cases() -> [(AppAttestFixture, AppAttestFixture.Assertion, Data)] {
        AppAttestFixture.names.map(AppAttestFixture.load).flatMap { fixture in
            let key = fixture.publicKey ?? (try! fixture.verifyAttestation()).publicKey
            return fixture.assertions.map { (fixture, $0, key) }
        }
    }

    @Test func theStandaloneAssertionVerifiesWithItsPublishedKey() throws {
        let fixture = AppAttestFixture.load("uebelack-assertion")
        let assertion = fixture.assertions[0]
        let result = try AssertionVerifier().verify(assertion: assertion.assertion, clientData: assertion.clientData,
                                                    publicKey: fixture.publicKey!, appID: fixture.appID, storedCounter: 0)
        #expect(result.counter == 1)
    }

    @Test func realAssertionsCarryTheATFlagAndStillVerify() throws {
        for (fixture, assertion, key) in Self.cases() {
            let authData = try CBORDecoder().decode(assertion.assertion)["authenticatorData"]!.bytesValue!
            #expect(authData.count == 37)
            #expect(authData[32] & 0x40 != 0, "\(fixture.name): the AT flag is set with no credential data")
            _ = try AssertionVerifier().verify(assertion: assertion.assertion, clientData: assertion.clientData, publicKey: key,
                                               appID: fixture.appID, storedCounter: assertion.counterBefore)
        }
    }

    @Test func aCounterNotAboveTheStoredOneIsRefused() {
        for (fixture, assertion, key) in Self.cases() {
            for stored in [assertion.counterAfter, assertion.counterAfter + 1, UInt32.max] {
                let failure = #expect(throws: AppAttestFailure.self) {
                    try AssertionVerifier().verify(assertion: assertion.assertion, clientData: assertion.clientData, publicKey: key,
                                                   appID: fixture.appID, storedCounter: stored)
                }
                #expect(failure?.reason == .counterNotIncreasing)
                #expect(failure?.code == "counter_not_increasing")
            }
        }
    }

    @Test func otherClientDataIsABadSignature() {
        for (fixture, assertion, key) in Self.cases() {
            let failure = #expect(throws: AppAttestFailure.self) {
                try AssertionVerifier().verify(assertion: assertion.assertion, clientData: assertion.clientData + Data("x".utf8),
                                               publicKey: key, appID: fixture.appID, storedCounter: 0)
            }
            #expect(failure?.reason == .badSignature)
        }
    }

    @Test func anotherKeyIsABadSignature() throws {
        let (fixture, assertion, _) = Self.cases()[0]
        let other = P256PrivateKey.generate().publicKey.uncompressedPoint
        let failure = #expect(throws: AppAttestFailure.self) {
            try AssertionVerifier().verify(assertion: assertion.assertion, clientData: assertion.clientData, publicKey: other,
                                           appID: fixture.appID, storedCounter: 0)
        }
        #expect(failure?.reason == .badSignature)
        // A stored key that is no point on the curve is refused as such, not trusted.
        var offCurve = other
        offCurve[64] ^= 0x01
        let bad = #expect(throws: AppAttestFailure.self) {
            try AssertionVerifier().verify(assertion: assertion.assertion, clientData: assertion.clientData, publicKey: offCurve,
                                           appID: fixture.appID, storedCounter: 0)
        }
        #expect(bad?.reason == .badFormat)
    }

    @Test func anotherAppIDIsAnRPIDMismatch() {
        for (fixture, assertion, key) in Self.cases() {
            let failure = #expect(throws: AppAttestFailure.self) {
                try AssertionVerifier().verify(assertion: assertion.assertion, clientData: assertion.clientData, publicKey: key,
                                               appID: AppID(teamID: fixture.appID.teamID, bundleID: "com.example.other"), storedCounter: 0)
            }
            #expect(failure?.reason == .rpIDMismatch)
        }
    }

    @Test func everySingleByteChangeIsRefused() {
        for (fixture, assertion, key) in Self.cases() {
            for index in 0..<assertion.assertion.count {
                for mask: UInt8 in [0x01, 0x80] {
                    do {
                        _ = try AssertionVerifier().verify(assertion: assertion.assertion.flipping(index, mask: mask), clientData: assertion.clientData,
                                                           publicKey: key, appID: fixture.appID, storedCounter: assertion.counterBefore)
                        Issue.record("\(fixture.name): flipping byte \(index) with \(mask) still verified")
                    } catch {
                        #expect([.badFormat, .badSignature].contains(error.reason), "\(fixture.name) byte \(index): \(error)")
                    }
                }
            }
        }
    }
}
