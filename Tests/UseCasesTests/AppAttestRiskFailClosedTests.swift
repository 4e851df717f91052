import AppAttest
import Foundation
import Ledger
@testable import Sandbox
import TestSupport
import Testing
import TwoBitsCrypto
import UseCases
import WireFormats

/// The risk policy fails closed, through the real server: with `refuse`, a new key's ATTEST receipt is renewed at
/// attestation so the device's metric (its other keys counted) applies before any token, limited-use ones
/// included; a key whose metric stays unknown past the grace is refused and counted in `/metrics`.
@Suite(.serialized) struct AppAttestRiskFailClosedTests {
    typealias Device = AppAttestRiskTests.Device

    func renewed(_ metric: Int) -> ReceiptRenewal {
        let now = Date()
        return .renewed(RenewedReceipt(receipt: Data([0x30, 0x80, UInt8(metric)]), riskMetric: metric, creation: now,
                                       notBefore: now.addingTimeInterval(86_400), expiration: now.addingTimeInterval(90 * 86_400)))
    }

    @Test func aDeviceOverTheLimitGetsNoNewKeyNotEvenALimitedUseToken() async throws {
        var farm = Device()
        let keyID = farm.key.keyID.base64EncodedString()
        // Apple counts the device's keys: this fifth one makes 5, over a maximum of 4; the retry sees the same.
        let renewer = ScriptedRenewer([keyID: [renewed(5), renewed(5)]])
        try await withService(AppAttestRiskTests.configuration(#"{"max_metric":4,"action":"refuse"}"#, renewer: renewer)) { h in
            for limitedUse in [false, true] {
                let refused = try await farm.attest(h, limitedUse: limitedUse)
                #expect(refused.status == 403, "\(refused.text)")
                #expect(refused.json?["error"]?["code"]?.stringValue == "attestation_invalid")
                #expect(refused.json?["error"]?["reason"]?.stringValue == "risk_metric_exceeded", "\(refused.text)")
            }
            // Nothing was stored: the key is unknown to the admin API.
            let key = try await h.request("GET", "/v1/admin/app-attest/keys/\(keyID.replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "+", with: "-"))",
                                          key: "admin")
            #expect(key.status == 404, "\(key.text)")
            let metrics = try await h.request("GET", "/metrics", key: "ops").text
            #expect(metrics.contains(#"twobits_app_attest_refusals_total{reason="risk_metric_exceeded"} 2"#))
        }
    }

    @Test func aDeviceUnderTheLimitIsAttestedWithTheMetricItGotAtAttestation() async throws {
        var device = Device()
        let keyID = device.key.keyID.base64EncodedString()
        let renewer = ScriptedRenewer([keyID: [renewed(3)]])
        try await withService(AppAttestRiskTests.configuration(#"{"max_metric":4,"action":"refuse"}"#, renewer: renewer)) { h in
            let attested = try await device.attest(h)
            #expect(attested.status == 201, "\(attested.text)")
            let token = try #require(attested.json?["token"]?.stringValue)
            let claims = try JSONValue.parse(try #require(Data(base64URLEncoded: String(token.split(separator: ".")[1]))))
            #expect(claims["risk"]?.intValue == 3, "the metric renewed at attestation rides in the first token")
            let view = try await h.request("GET", "/v1/admin/app-attest/keys/\(device.artifact)", key: "admin")
            #expect(view.json?["risk_metric"]?.intValue == 3, "\(view.text)")
            #expect(view.json?["receipt_not_before"]?.stringValue != nil, "the renewed receipt is stored: the refresher waits for its not-before")
            // The refresher leaves the key alone until then: one call, the attestation's.
            try await Task.sleep(for: .milliseconds(600))
            #expect(renewer.calls == [keyID])
        }
    }

    @Test func anAppleOutageAtAttestationLetsTheKeyInWithAnUnknownMetric() async throws {
        var device = Device()
        let keyID = device.key.keyID.base64EncodedString()
        let renewer = ScriptedRenewer([keyID: [.unavailable("503")]])
        try await withService(AppAttestRiskTests.configuration(#"{"max_metric":4,"action":"refuse"}"#, renewer: renewer)) { h in
            let attested = try await device.attest(h)
            #expect(attested.status == 201, "\(attested.text)")
            let view = try await h.request("GET", "/v1/admin/app-attest/keys/\(device.artifact)", key: "admin")
            #expect(view.status == 200 && view.json?["key_id"] != nil, "\(view.text)")
            #expect(view.json?["risk_metric"] == nil || view.json?["risk_metric"] == .null, "\(view.text)")
        }
    }

    @Test func aMetricUnknownPastTheGraceIsRefusedAndCounted() async throws {
        var device = Device()
        try await withService(AppAttestRiskTests.configuration(#"{"max_metric":4,"action":"refuse","check_at_attestation":false}"#,
                                                                unknownGrace: 1)) { h in
            #expect(try await device.attest(h).status == 201)
            let within = try await device.assert(h)
            #expect(within.status == 200, "within the grace: \(within.text)")
            try await Task.sleep(for: .milliseconds(1_300))
            let past = try await device.assert(h)
            #expect(past.status == 403, "\(past.text)")
            #expect(past.json?["error"]?["reason"]?.stringValue == "risk_metric_unknown", "\(past.text)")
            let metrics = try await h.request("GET", "/metrics", key: "ops").text
            #expect(metrics.contains("twobits_app_attest_keys_metric_unknown 1"), "\(metrics.split(separator: "\n").filter { $0.contains("unknown") })")
            #expect(metrics.contains(#"twobits_app_attest_refusals_total{reason="risk_metric_unknown"} 1"#))
        }
    }

    @Test func flagNeverRefusesAnUnknownMetric() async throws {
        var device = Device()
        try await withService(AppAttestRiskTests.configuration(#"{"max_metric":4,"action":"flag"}"#, unknownGrace: 1)) { h in
            #expect(try await device.attest(h).status == 201)
            try await Task.sleep(for: .milliseconds(1_300))
            let past = try await device.assert(h)
            #expect(past.status == 200, "\(past.text)")
        }
    }
}
