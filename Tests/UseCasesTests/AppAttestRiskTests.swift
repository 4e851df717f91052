import AppAttest
import Foundation
import Ledger
@testable import Sandbox
import SQLiteLedger
import TestSupport
import Testing
import TwoBitsCrypto
import UseCases
import WireFormats

/// Apple's risk metric through the real server: a key's metric set in its ledger (as the refresher
/// stores it) reaches the `risk` claim of its tokens; over `app_attest.risk.max_metric`, `refuse` answers
/// 403 `risk_metric_exceeded` and `flag` issues the token with the claim; the admin API shows the metric.
@Suite(.serialized) struct AppAttestRiskTests {
    static func configuration(_ risk: String?, renewer: (any ReceiptRenewing)? = nil, unknownGrace: TimeInterval? = nil) -> ServiceHarness.Configuration {
        let riskField = risk.map { #","risk":\#($0)"# } ?? ""
        return ServiceHarness.Configuration(extra: ["app_attest": #"{"apps":["TEAMID1234.com.example.http"],"environment":"production","#
            // Without a renewer of the test's own, no refresher runs: the tests set each metric as the refresher would.
            + #""root_ca_file":"appattest-root.pem","receipts":{"enabled":\#(renewer != nil),"max_refreshes_per_second":5,"#
            + #""root_ca_file":"receipt-root.pem"}\#(riskField)}"#],
            // The refresher looks again for due keys after 0.2 s instead of 10 s, so a test need not wait.
            adjust: { configuration in
                configuration.appAttest?.receipts.idleDelay = 0.2
                // Below the configuration's one-hour floor, so that a test sees a grace run out.
                if let unknownGrace { configuration.appAttest?.risk?.unknownGrace = unknownGrace }
            }, receiptRenewer: renewer)
    }

    struct Device {
        let key = SimulatedAppAttestKey(appID: AppID(teamID: "TEAMID1234", bundleID: "com.example.http"), environment: .production,
                                        validationCategory: nil, bundleVersion: nil, deviceID: nil)
        var artifact = ""

        mutating func attest(_ h: ServiceHarness, limitedUse: Bool = false) async throws -> ServiceHarness.Answer {
            let challenge = try await Self.challenge(h)
            let object = key.attestationObject(clientDataHash: SHA256Digest.hash(Data(base64URLEncoded: challenge)!), fault: nil,
                                               authority: h.sandbox.appAttestAuthority, now: Date())
            let answer = try await h.post("/v1/app-attest/attestations", #"{"key_id":"\#(key.keyID.base64EncodedString())","#
                + #""attestation_object":"\#(object.base64EncodedString())","challenge":"\#(challenge)","limited_use":\#(limitedUse)}"#, key: "mainapi")
            artifact = answer.json?["artifact"]?.stringValue ?? ""
            return answer
        }

        func assert(_ h: ServiceHarness) async throws -> ServiceHarness.Answer {
            let challenge = try await Self.challenge(h)
            let clientData = Data(#"{"challenge":"\#(challenge)"}"#.utf8)
            let signed = key.assertion(clientDataHash: SHA256Digest.hash(clientData), fault: nil).assertion
            return try await h.post("/v1/app-attest/assertions", #"{"artifact":"\#(artifact)","assertion":"\#(signed.base64EncodedString())","#
                + #""client_data":"\#(clientData.base64EncodedString())","challenge":"\#(challenge)"}"#, key: "mainapi")
        }

        static func challenge(_ h: ServiceHarness) async throws -> String {
            try #require(try await h.post("/v1/app-attest/challenges", "{}", key: "mainapi").json?["challenge"]?.stringValue)
        }
    }

    /// Stores a renewed receipt with this metric, as the refresher does, in the service's own ledger file.
    /// `daysLater`: the refresher's clock, past the previous receipt's not-before.
    func setMetric(_ h: ServiceHarness, _ device: Device, _ metric: Int, daysLater: Double = 0) async throws {
        let ledger = try SQLiteLedger(path: h.directory + "/ledger.sqlite")
        let now = Date().addingTimeInterval(daysLater * 86_400)
        let keyID = device.key.keyID.base64EncodedString()
        let leased = try await ledger.leaseDueReceipts(owner: "test", until: now.addingTimeInterval(60), activeSince: now.addingTimeInterval(-30 * 86_400),
                                                       now: now, limit: 100)
        #expect(leased.map(\.keyID).contains(keyID))
        #expect(try await ledger.storeRenewedReceipt(keyID: keyID, owner: "test", receipt: Data([0x30, 0x80]), riskMetric: metric,
                                                     notBefore: now.addingTimeInterval(86_400), expiration: now.addingTimeInterval(90 * 86_400), now: now))
    }

    /// The claims of a token (its signature is the service's own; checked elsewhere).
    func claims(_ answer: ServiceHarness.Answer) throws -> JSONValue {
        let token = try #require(answer.json?["token"]?.stringValue)
        let payload = try #require(Data(base64URLEncoded: String(token.split(separator: ".")[1])))
        return try JSONValue.parse(payload)
    }

    @Test func theMetricRidesInTheTokenAndRefuseRefusesAboveTheMaximum() async throws {
        try await withService(Self.configuration(#"{"max_metric":5,"action":"refuse","check_at_attestation":false}"#)) { h in
            var device = Device()
            let attested = try await device.attest(h)
            #expect(attested.status == 201, "\(attested.text)")
            #expect(try claims(attested)["risk"] == nil, "absent while unknown")
            try await setMetric(h, device, 5)
            let atMaximum = try await device.assert(h)
            #expect(atMaximum.status == 200, "\(atMaximum.text)")
            #expect(try claims(atMaximum)["risk"]?.intValue == 5)
            try await setMetric(h, device, 6, daysLater: 1.01)
            let over = try await device.assert(h)
            #expect(over.status == 403 && over.code == "assertion_invalid", "\(over.text)")
            #expect(over.json?["error"]?["reason"]?.stringValue == "risk_metric_exceeded", "\(over.text)")

            let view = try await h.request("GET", "/v1/admin/app-attest/keys/\(device.artifact)", key: "admin")
            #expect(view.status == 200 && view.json?["risk_metric"]?.intValue == 6, "\(view.text)")
            #expect(view.json?["risk_history"]?.arrayValue?.count == 2, "\(view.text)")
            #expect(view.json?["receipt_not_before"]?.stringValue != nil && view.json?["receipt_expires_at"]?.stringValue != nil, "\(view.text)")
            let listed = try await h.request("GET", "/v1/admin/app-attest/keys?min_risk_metric=6", key: "admin")
            #expect(listed.status == 200 && listed.json?["keys"]?.arrayValue?.count == 1, "\(listed.text)")
            let none = try await h.request("GET", "/v1/admin/app-attest/keys?min_risk_metric=7", key: "admin")
            #expect(none.status == 200 && none.json?["keys"]?.arrayValue?.isEmpty == true, "\(none.text)")
            let unknown = try await h.request("GET", "/v1/admin/app-attest/keys?max=1", key: "admin")
            #expect(unknown.status == 400, "\(unknown.text)")
        }
    }

    @Test func flagIssuesTheTokenWithTheClaim() async throws {
        try await withService(Self.configuration(#"{"max_metric":5,"action":"flag"}"#)) { h in
            var device = Device()
            #expect(try await device.attest(h).status == 201)
            try await setMetric(h, device, 12)
            let flagged = try await device.assert(h)
            #expect(flagged.status == 200, "\(flagged.text)")
            #expect(try claims(flagged)["risk"]?.intValue == 12)
        }
    }

    /// The composition root starts the refresher: with a renewer that answers a metric of 8 for the key, the
    /// service's own refresher stores it, and the next assertion is refused.
    @Test func theServicesRefresherStoresTheMetricItsRenewerGets() async throws {
        var device = Device()
        let keyID = device.key.keyID.base64EncodedString()
        let now = Date()
        let renewer = ScriptedRenewer([keyID: [.renewed(RenewedReceipt(receipt: Data([0x30, 0x80, 0x08]), riskMetric: 8, creation: now,
                                                                       notBefore: now.addingTimeInterval(86_400), expiration: now.addingTimeInterval(90 * 86_400)))]])
        try await withService(Self.configuration(#"{"max_metric":5,"action":"refuse","check_at_attestation":false}"#, renewer: renewer)) { h in
            #expect(try await device.attest(h).status == 201)
            var metric: Int64?
            // Polled for up to a minute (no timing is asserted).
            for _ in 0..<600 where metric == nil {
                metric = try await h.request("GET", "/v1/admin/app-attest/keys/\(device.artifact)", key: "admin").json?["risk_metric"]?.intValue
                if metric == nil { try await Task.sleep(for: .milliseconds(100)) }
            }
            #expect(metric == 8)
            #expect(renewer.calls == [keyID], "renewed once, not before its not-before")
            let refused = try await device.assert(h)
            #expect(refused.status == 403 && refused.json?["error"]?["reason"]?.stringValue == "risk_metric_exceeded", "\(refused.text)")
            let metrics = try await h.request("GET", "/metrics", key: "ops").text
            #expect(metrics.contains(#"twobits_app_attest_receipt_refreshes_total{outcome="renewed"} 1"#))
        }
    }
}
