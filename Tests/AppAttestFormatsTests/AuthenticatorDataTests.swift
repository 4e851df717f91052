import AppAttestFixtures
import AppAttestFormats
import Foundation
import Testing

/// Layouts the captured iOS 14-17 devices do not show: iOS 27's extensions map, the flags around it.
@Suite struct AuthenticatorDataTests {
    /// Computed, not stored: LeakSanitizer cannot follow Data held in a static.
    static var realAuthData: Data {
        let object = AppAttestFixture.load("veehaitch-ios-14.4").attestation!
        return try! CBORDecoder().decode(object)["authData"]!.bytesValue!
    }

    /// {"apple_validation_category_01": 4, "apple_bundle_version_01": "1.2.3"}
    static var extensions: Data {
        func text(_ s: String) -> [UInt8] {
            let utf8 = Array(s.utf8)
            return (utf8.count < 24 ? [0x60 | UInt8(utf8.count)] : [0x78, UInt8(utf8.count)]) + utf8
        }
        return Data([0xA2] + text("apple_validation_category_01") + [0x04] + text("apple_bundle_version_01") + text("1.2.3"))
    }

    @Test func theRealLayoutParses() throws {
        let parsed = try AuthenticatorData(Self.realAuthData, kind: .attestation)
        #expect(parsed.flags == 0x40)
        #expect(parsed.counter == 0)
        #expect(parsed.credential?.aaguid == AppAttestEnvironment.development.aaguid)
        #expect(parsed.credential?.credentialID.count == 32)
        #expect(parsed.extensions == nil)
        #expect(parsed.validationCategory == nil)
    }

    @Test func iOS27ExtensionsAreReadEvenWithTheEDFlagClear() throws {
        let parsed = try AuthenticatorData(Self.realAuthData + Self.extensions, kind: .attestation)
        #expect(parsed.flags & AuthenticatorData.extensionDataFlag == 0)
        #expect(parsed.validationCategory == .appStore)
        #expect(parsed.validationCategory?.name == "app_store")
        #expect(parsed.bundleVersion == "1.2.3")
        var flagged = Self.realAuthData + Self.extensions
        flagged[32] |= AuthenticatorData.extensionDataFlag
        #expect(try AuthenticatorData(flagged, kind: .attestation).validationCategory == .appStore)
    }

    @Test func bytesAfterTheKeyThatAreNoMapAreRefused() {
        for tail: [UInt8] in [[0x00], [0xA1], [0xA0, 0x00], [0x81, 0x00]] {
            let failure = #expect(throws: AppAttestFailure.self) { try AuthenticatorData(Self.realAuthData + Data(tail), kind: .attestation) }
            #expect(failure?.reason == .badFormat)
        }
        var flagged = Self.realAuthData
        flagged[32] |= AuthenticatorData.extensionDataFlag
        #expect(throws: AppAttestFailure.self) { try AuthenticatorData(flagged, kind: .attestation) }
    }

    @Test func truncationsAreRefusedAtEveryLength() {
        for length in 0..<Self.realAuthData.count {
            #expect(throws: AppAttestFailure.self) { try AuthenticatorData(Self.realAuthData.prefix(length), kind: .attestation) }
        }
    }

    @Test func assertionDataIgnoresTheATFlagAndReadsExtensions() throws {
        var bytes = Data(Self.realAuthData.prefix(37))
        bytes[33...36] = Data([0, 0, 1, 2])
        let parsed = try AuthenticatorData(bytes, kind: .assertion)
        #expect(parsed.flags & AuthenticatorData.attestedCredentialFlag != 0)
        #expect(parsed.credential == nil)
        #expect(parsed.counter == 258)
        #expect(try AuthenticatorData(bytes + Self.extensions, kind: .assertion).validationCategory == .appStore)
        #expect(throws: AppAttestFailure.self) { try AuthenticatorData(bytes.prefix(36), kind: .assertion) }
    }

    @Test func categoriesHaveStableNames() {
        #expect([1, 2, 3, 4, 5, 6, 10, 42].map { ValidationCategory(rawValue: $0).name }
                == ["platform", "testflight", "development", "app_store", "enterprise", "developer_id", "none", "category_42"])
    }
}
