import AppAttest
import Foundation
@testable import Sandbox
import SQLiteLedger
import TestSupport
import Testing
import TwoBitsCrypto
import WireFormats

/// The strong tier through the real server: the order of effects (a refusal after verification leaves the
/// challenge usable), bans by device token, a required device token, and revocation.
@Suite(.serialized) struct AppAttestHTTPTests {
    static let appID = AppID(teamID: "TEAMID1234", bundleID: "com.example.http")

    static func configuration(requireDeviceToken: Bool = false) -> ServiceHarness.Configuration {
        ServiceHarness.Configuration(extra: ["app_attest": #"{"apps":["TEAMID1234.com.example.http"],"environment":"production","#
            + #""root_ca_file":"appattest-root.pem","receipts":{"root_ca_file":"receipt-root.pem","enabled":false},"#
            + #""require_device_token":\#(requireDeviceToken)}"#])
    }

    func challenge(_ h: ServiceHarness) async throws -> String {
        let answer = try await h.post("/v1/app-attest/challenges", "{}", key: "mainapi")
        #expect(answer.status == 201, "\(answer.text)")
        return try #require(answer.json?["challenge"]?.stringValue)
    }

    func attestBody(_ h: ServiceHarness, _ key: SimulatedAppAttestKey, _ challenge: String, deviceToken: String? = nil) -> String {
        let object = key.attestationObject(clientDataHash: SHA256Digest.hash(Data(base64URLEncoded: challenge)!), fault: nil,
                                           authority: h.sandbox.appAttestAuthority, now: Date())
        let device = deviceToken.map { #","device_token":"\#($0)""# } ?? ""
        return #"{"key_id":"\#(key.keyID.base64EncodedString())","attestation_object":"\#(object.base64EncodedString())","challenge":"\#(challenge)"\#(device)}"#
    }

    func device() -> SimulatedAppAttestKey {
        SimulatedAppAttestKey(appID: Self.appID, environment: .production, validationCategory: nil, bundleVersion: nil, deviceID: nil)
    }

    @Test func aBannedDeviceIsRefusedAndTheChallengeStaysUsable() async throws {
        try await withService(Self.configuration()) { h in
            let banned = h.freshDevice()
            let ban = try await h.post("/v1/admin/bans", #"{"device_token":"\#(banned.token)","reason":"fraud"}"#, key: "admin")
            #expect(ban.status == 200, "\(ban.text)")
            let key = device()
            let value = try await challenge(h)
            let refused = try await h.post("/v1/app-attest/attestations", attestBody(h, key, value, deviceToken: h.sandbox.mintToken(for: banned.id)!), key: "mainapi")
            #expect(refused.status == 403 && refused.code == "device_banned", "\(refused.text)")
            // Nothing was used up by the refusal: the same challenge and key attest for a device in good standing.
            let accepted = try await h.post("/v1/app-attest/attestations", attestBody(h, key, value, deviceToken: h.freshDevice().token), key: "mainapi")
            #expect(accepted.status == 201, "\(accepted.text)")
            #expect(accepted.json?["tier"]?.stringValue == "appattest")
        }
    }

    @Test func aRequiredDeviceTokenIsRequired() async throws {
        try await withService(Self.configuration(requireDeviceToken: true)) { h in
            let key = device()
            let value = try await challenge(h)
            let refused = try await h.post("/v1/app-attest/attestations", attestBody(h, key, value), key: "mainapi")
            #expect(refused.status == 400 && refused.code == "device_token_required", "\(refused.text)")
            let accepted = try await h.post("/v1/app-attest/attestations", attestBody(h, key, value, deviceToken: h.freshDevice().token), key: "mainapi")
            #expect(accepted.status == 201, "\(accepted.text)")
        }
    }

    /// The revocation and its audit event are one write: when the audit trail refuses the event, the admin gets 503
    /// and the key is not revoked (never a revocation nobody can trace).
    @Test func aRevocationWhoseAuditEventIsRefusedRevokesNothing() async throws {
        try await withService(Self.configuration()) { h in
            let key = device()
            let attested = try await h.post("/v1/app-attest/attestations", attestBody(h, key, try await challenge(h)), key: "mainapi")
            let artifact = try #require(attested.json?["artifact"]?.stringValue)
            let ledger = try SQLiteConnection(path: h.directory + "/ledger.sqlite")
            try ledger.execute("CREATE TRIGGER refuse_audit BEFORE INSERT ON audit_events BEGIN SELECT RAISE(ABORT, 'refused by a trigger'); END")
            let refused = try await h.post("/v1/admin/app-attest/keys/\(artifact)/revoke", #"{"reason":"stolen"}"#, key: "admin")
            #expect(refused.status == 503 && refused.code == "storage_unavailable", "\(refused.text)")
            try ledger.execute("DROP TRIGGER refuse_audit")
            let shown = try await h.request("GET", "/v1/admin/app-attest/keys/\(artifact)", key: "admin")
            #expect(shown.status == 200 && shown.json?["revoked"] == .bool(false), "\(shown.text)")
            let revoke = try await h.post("/v1/admin/app-attest/keys/\(artifact)/revoke", #"{"reason":"stolen"}"#, key: "admin")
            #expect(revoke.status == 200 && revoke.json?["revoked"] == .bool(true), "\(revoke.text)")
            let audit = try await h.request("GET", "/v1/admin/audit", key: "admin")
            #expect(audit.text.contains("app_attest.revoke"), "\(audit.text)")
        }
    }

    @Test func aRevokedKeyAssertsNoMore() async throws {
        try await withService(Self.configuration()) { h in
            let key = device()
            let attested = try await h.post("/v1/app-attest/attestations", attestBody(h, key, try await challenge(h)), key: "mainapi")
            let artifact = try #require(attested.json?["artifact"]?.stringValue)

            func assertOnce() async throws -> ServiceHarness.Answer {
                let value = try await challenge(h)
                let clientData = Data(#"{"challenge":"\#(value)"}"#.utf8)
                let signed = key.assertion(clientDataHash: SHA256Digest.hash(clientData), fault: nil).assertion
                return try await h.post("/v1/app-attest/assertions", #"{"artifact":"\#(artifact)","assertion":"\#(signed.base64EncodedString())","#
                    + #""client_data":"\#(clientData.base64EncodedString())","challenge":"\#(value)"}"#, key: "mainapi")
            }
            let first = try await assertOnce()
            #expect(first.status == 200 && first.json?["counter"]?.intValue == 1, "\(first.text)")
            // A reason with a C1 CSI or a bidi override is refused as a ban's is (issue 34), and revokes nothing.
            for reason in [#""\u009b31mstolen""#, #""stolen \u202e""#] {
                let refused = try await h.post("/v1/admin/app-attest/keys/\(artifact)/revoke", #"{"reason":\#(reason)}"#, key: "admin")
                #expect(refused.status == 400 && refused.code == "bad_request", "\(refused.text)")
            }
            let stillValid = try await assertOnce()
            #expect(stillValid.status == 200 && stillValid.json?["counter"]?.intValue == 2, "\(stillValid.text)")
            let revoke = try await h.post("/v1/admin/app-attest/keys/\(artifact)/revoke", #"{"reason":"stolen"}"#, key: "admin")
            #expect(revoke.status == 200 && revoke.json?["revoked"] == .bool(true), "\(revoke.text)")
            let after = try await assertOnce()
            #expect(after.status == 403 && after.json?["error"]?["reason"]?.stringValue == "key_revoked", "\(after.text)")
        }
    }

    /// A format character (Cf: U+FEFF, U+00AD, U+200B, a tag) or a line or paragraph separator (U+2028, U+2029) in
    /// a revoke reason: invisible, or a line break, to an admin reading the audit trail; refused, the key kept.
    @Test(arguments: [#""lost\u2028admin: nothing to see""#, #""lost\u2029""#, #""\ufefflost""#, #""lo\u00adst""#,
                      #""lo\u200bst""#, #""lost \udb40\udc41""#])
    func aRevokeReasonWithAFormatOrSeparatorCharacterIsRefused(_ reason: String) async throws {
        try await withService(Self.configuration()) { h in
            let attested = try await h.post("/v1/app-attest/attestations", attestBody(h, device(), try await challenge(h)), key: "mainapi")
            let artifact = try #require(attested.json?["artifact"]?.stringValue)
            let refused = try await h.post("/v1/admin/app-attest/keys/\(artifact)/revoke", #"{"reason":\#(reason)}"#, key: "admin")
            #expect(refused.status == 400 && refused.code == "bad_request", "\(reason): \(refused.text)")
            // Not revoked by the refused call: this one revokes it. A joiner (emoji sequence) is text.
            let revoke = try await h.post("/v1/admin/app-attest/keys/\(artifact)/revoke", #"{"reason":"lost \ud83d\udc69\u200d\ud83d\udcbb"}"#, key: "admin")
            #expect(revoke.status == 200 && revoke.json?["revoked"] == .bool(true), "\(revoke.text)")
        }
    }
}
