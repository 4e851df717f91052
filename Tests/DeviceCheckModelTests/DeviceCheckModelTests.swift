import DeviceCheckModel
import Foundation
import Testing

/// What DeviceCheckModel adds to DeviceDomain's values: the device token and its digest, a `Date`'s month, the hosts.
@Suite struct DeviceCheckModelTests {
    @Test func aTokenIsStandardBase64AndKnownByItsDigest() throws {
        let token = try #require(DeviceToken("AAECAw=="))
        // SHA-256 of the token's text, as `printf 'AAECAw==' | sha256sum` prints it.
        #expect(token.digest == "25464e8d1c31533cfab75eae73087189c62ca36a4d974af2eb828d5c0c8356d7")
        #expect(token.shortDigest == String(token.digest.prefix(12)))
        #expect(!token.description.contains("AAECAw"))
        for bad in ["", "AAECAw=", "AAEC Aw==", "AA=CAw==", "AAECAw-_", String(repeating: "A", count: DeviceToken.maxLength + 4)] {
            #expect(DeviceToken(bad) == nil, "\(bad.prefix(20))")
        }
    }

    @Test func aDatesMonthIsTheMonthOfItsSeconds() {
        let date = Date(timeIntervalSince1970: 1_796_083_199.5)   // 2026-11-30 23:59:59.5 UTC
        #expect(YearMonth(containing: date) == YearMonth(year: 2026, month: 11))
        #expect(YearMonth(containing: date.addingTimeInterval(0.5)) == YearMonth(year: 2026, month: 12))
    }

    @Test func eachEnvironmentHasItsHosts() {
        #expect(AppleEnvironment.production.baseURL == "https://api.devicecheck.apple.com")
        #expect(AppleEnvironment.development.baseURL == "https://api.development.devicecheck.apple.com")
        #expect(AppleEnvironment.development.appAttestDataBaseURL == "https://data-development.appattest.apple.com")
    }
}
