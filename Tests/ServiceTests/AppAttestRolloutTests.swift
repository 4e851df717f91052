import Foundation
import Testing
import TwoBitsCrypto
import TwoBitsService
import UseCases

/// `app_attest.rollout` (issue 35, part 3): the bucket of an install, the share at a time, and the
/// configuration's refusals. The HTTP answers are tested in Tests/python/test_app_attest_rollout.py.
@Suite struct AppAttestRolloutTests {
    static func time(_ text: String) -> Date { try! Date.ISO8601FormatStyle().parse(text) }

    @Test func theBucketIsTheDocumentedHashAndDoesNotMove() {
        // Computed independently in Python: int.from_bytes(sha256(b"twobits.app-attest.rollout.v1\0" + id)[:8], "big") % 10000.
        #expect(AppAttestRollout.bucket(installID: "ios-test-install") == 3_018)
        #expect(AppAttestRollout.bucket(installID: "install-00000") == 4_624)
        #expect(AppAttestRollout.bucket(installID: "abc") == 8_904)
        let rollout = AppAttestRollout(basisPoints: 3_019)
        #expect(rollout.includes(installID: "ios-test-install", at: Date()))
        #expect(!AppAttestRollout(basisPoints: 3_018).includes(installID: "ios-test-install", at: Date()))
        #expect(!rollout.includes(installID: nil, at: Date()))
        #expect(AppAttestRollout(basisPoints: 10_000).includes(installID: nil, at: Date()))
        #expect(!AppAttestRollout(basisPoints: 0).includes(installID: "anything", at: Date()))
    }

    @Test func aRampInterpolatesLinearlyAndHoldsItsEndsOutsideIt() {
        let ramp = AppAttestRollout(from: Self.time("2026-12-01T00:00:00Z"), to: Self.time("2027-01-01T00:00:00Z"), fromBasisPoints: 1_000, toBasisPoints: 9_000)
        #expect(ramp.basisPoints(at: Self.time("2020-01-01T00:00:00Z")) == 1_000)
        #expect(ramp.basisPoints(at: Self.time("2026-12-01T00:00:00Z")) == 1_000)
        // 31 days: day 10 is 10/31 of the way, 1,000 + 8,000 × 10/31 = 3,580.6, rounded down.
        #expect(ramp.basisPoints(at: Self.time("2026-12-11T00:00:00Z")) == 3_580)
        #expect(ramp.basisPoints(at: Self.time("2026-12-16T12:00:00Z")) == 5_000)
        #expect(ramp.basisPoints(at: Self.time("2027-01-01T00:00:00Z")) == 9_000)
        #expect(ramp.basisPoints(at: Self.time("2030-01-01T00:00:00Z")) == 9_000)
        // The share only rises: an install in at one time is in at every later one.
        var last = 0
        for day in 0..<40 {
            let share = ramp.basisPoints(at: Self.time("2026-11-28T00:00:00Z").addingTimeInterval(Double(day) * 86_400))
            #expect(share >= last)
            last = share
        }
    }

    let section = AppAttestSectionParser()
    var directory: String { section.directory }

    func parse(_ fields: String) throws(ConfigurationError) -> AppAttestSettings? { try section.parse(fields) }

    @Test func theRolloutAndTheCapAreRead() throws {
        #expect(try parse(#""environment":"production""#)?.rollout == nil)
        #expect(try parse(#""rollout":30"#)?.rollout == AppAttestRollout(basisPoints: 3_000))
        #expect(try parse(#""rollout":12.25"#)?.rollout == AppAttestRollout(basisPoints: 1_225))
        #expect(try parse(#""rollout":{"from":"2026-12-01T00:00:00Z","to":"2027-01-01T00:00:00Z"}"#)?.rollout
                == AppAttestRollout(from: Self.time("2026-12-01T00:00:00Z"), to: Self.time("2027-01-01T00:00:00Z"), fromBasisPoints: 0, toBasisPoints: 10_000))
        #expect(try parse(#""rollout":{"from":"2026-12-01T00:00:00Z","to":"2027-01-01T01:00:00+01:00","from_percent":5,"to_percent":50}"#)?.rollout
                == AppAttestRollout(from: Self.time("2026-12-01T00:00:00Z"), to: Self.time("2027-01-01T00:00:00Z"), fromBasisPoints: 500, toBasisPoints: 5_000))
        #expect(try parse(#""max_attestations_per_second":90"#)?.maxAttestationsPerSecond == 90)
        #expect(try parse(#""rollout":null"#)?.maxAttestationsPerSecond == nil)
    }

    @Test(arguments: [
        (#""rollout":-1"#, "app_attest.rollout"), (#""rollout":100.5"#, "app_attest.rollout"), (#""rollout":12.345"#, "app_attest.rollout"),
        (#""rollout":"30""#, "app_attest.rollout"), (#""rollout":true"#, "app_attest.rollout"), (#""rollout":[30]"#, "app_attest.rollout"),
        (#""rollout":{"to":"2027-01-01T00:00:00Z"}"#, "app_attest.rollout.from"),
        (#""rollout":{"from":"2026-12-01","to":"2027-01-01T00:00:00Z"}"#, "app_attest.rollout.from"),
        (#""rollout":{"from":"2027-01-01T00:00:00Z","to":"2027-01-01T00:00:00Z"}"#, "app_attest.rollout.to"),
        (#""rollout":{"from":"2026-12-01T00:00:00Z","to":"2027-01-01T00:00:00Z","from_percent":50,"to_percent":40}"#, "app_attest.rollout.to_percent"),
        (#""rollout":{"from":"2026-12-01T00:00:00Z","to":"2027-01-01T00:00:00Z","to_percent":101}"#, "app_attest.rollout.to_percent"),
        (#""rollout":{"from":"2026-12-01T00:00:00Z","to":"2027-01-01T00:00:00Z","from_percent":"5"}"#, "app_attest.rollout.from_percent"),
        (#""rollout":{"from":"2026-12-01T00:00:00Z","to":"2027-01-01T00:00:00Z","percent":1}"#, "app_attest.rollout.percent"),
        (#""max_attestations_per_second":0"#, "app_attest.max_attestations_per_second"),
        (#""max_attestations_per_second":2.5"#, "app_attest.max_attestations_per_second"),
    ])
    func aBadRolloutIsRefusedNamingItsField(fields: String, field: String) {
        section.expectRefused(fields, naming: field)
    }
}
