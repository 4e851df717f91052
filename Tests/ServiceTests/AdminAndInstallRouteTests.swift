import Foundation
import TestSupport
import Testing
import TwoBitsCrypto

/// The install and admin routes through real HTTP: the reinstall counter, bans now and pending by install
/// id, the state report, the audit trail's paging, debug-secret management, and the documented 400s; each test runs
/// over loopback HTTP and in process (`ServiceHarness.Mode`).
@Suite struct AdminAndInstallRouteTests {
    static let counter = ["bits": #"{"mode":"reinstall-counter","ban_at":3}"#, "promotions": "[]"]

    static func install(_ h: ServiceHarness, _ token: String, installID: String? = nil) async throws -> ServiceHarness.Answer {
        let id = installID.map { #","install_id":"\#($0)""# } ?? ""
        return try await h.post("/v1/installs", #"{"device_token":"\#(token)"\#(id)}"#, key: "mainapi")
    }

    @Test(arguments: ServiceHarness.Mode.allCases) func everyRouteRefusesAClientWithoutItsRoleBeforeCallingApple(mode: ServiceHarness.Mode) async throws {
        try await withService(mode: mode) { h in
            let token = h.freshDevice().token
            let body = #"{"device_token":"\#(token)"}"#
            // (method, path, body, role the route needs); each is tried with every client lacking that role.
            let routes: [(String, String, String?, String)] = [
                ("POST", "/v1/promotions/spring/claim", body, "marketing"),
                ("POST", "/v1/promotions/spring/eligibility", body, "marketing"),
                ("POST", "/v1/installs", body, "mainapi"),
                ("POST", "/v1/fallback-tokens", body, "mainapi"),
                ("POST", "/v1/fallback-tokens/verify", #"{"token":"x"}"#, "mainapi"),
                ("POST", "/v1/admin/bans", #"{"device_token":"\#(token)","reason":"r"}"#, "admin"),
                ("POST", "/v1/admin/unbans", body, "admin"),
                ("POST", "/v1/admin/devices/state", body, "admin"),
                ("GET", "/v1/admin/bans/pending", nil, "admin"),
                ("GET", "/v1/admin/audit", nil, "admin"),
                ("POST", "/v1/admin/debug-secrets", #"{"name":"n"}"#, "admin"),
                ("GET", "/v1/admin/debug-secrets", nil, "admin"),
            ]
            for (method, path, payload, owner) in routes {
                for client in ["marketing", "mainapi", "admin"] where client != owner {
                    let answer = try await h.request(method, path, key: client, body: payload)
                    #expect(answer.status == 403, "\(client) \(method) \(path): \(answer.status)")
                    #expect(answer.code == "forbidden", "\(client) \(method) \(path)")
                }
            }
            #expect(h.sandbox.counters.calls.values.reduce(0, +) == 0, "no refused request reached Apple")
        }
    }

    @Test(arguments: ServiceHarness.Mode.allCases) func theFourthRegistrationBansAndTheFifthIsRefused(mode: ServiceHarness.Mode) async throws {
        try await withService(.init(extra: Self.counter), mode: mode) { h in
            let device = h.freshDevice()
            for expected in 0...3 {
                let answer = try await Self.install(h, h.sandbox.mintToken(for: device.id)!)
                #expect(answer.status == 200)
                #expect(answer.json?["reinstalls"]?.intValue == Int64(expected))
                #expect(answer.json?["banned"]?.boolValue == (expected == 3))
            }
            let refused = try await Self.install(h, h.sandbox.mintToken(for: device.id)!)
            #expect(refused.status == 403)
            #expect(refused.code == "device_banned")
            let state = try await h.post("/v1/admin/devices/state", #"{"device_token":"\#(h.sandbox.mintToken(for: device.id)!)"}"#, key: "admin")
            #expect(state.status == 200)
            #expect(state.json?["meaning"]?["banned"]?.boolValue == true)
            #expect(state.json?["meaning"]?["reinstalls"]?.intValue == 3)
            #expect(state.json?["raw"]?["never_set"]?.boolValue == false)
            let metrics = try await h.request("GET", "/metrics", key: nil)
            #expect(metrics.text.contains("twobits_automatic_bans_total 1"))
        }
    }

    @Test(arguments: ServiceHarness.Mode.allCases) func aPendingBanAndUnbanByInstallIDApplyAtTheNextRegistration(mode: ServiceHarness.Mode) async throws {
        try await withService(.init(extra: Self.counter), mode: mode) { h in
            let device = h.freshDevice()
            #expect(try await Self.install(h, device.token, installID: "inst-1").status == 200)

            let ordered = try await h.post("/v1/admin/bans", #"{"install_id":"inst-1","reason":"chargeback"}"#, key: "admin")
            #expect(ordered.status == 202)
            #expect(ordered.json?["applied"]?.boolValue == false)
            #expect(ordered.json?["install_id"]?.stringValue == "inst-1")
            let pending = try await h.request("GET", "/v1/admin/bans/pending", key: "admin")
            guard case .array(let items)? = pending.json?["pending"] else { Issue.record("no pending list: \(pending.text)"); return }
            #expect(items.count == 1)
            #expect(items.first?["action"]?.stringValue == "ban")
            #expect(items.first?["reason"]?.stringValue == "chargeback")

            let banned = try await Self.install(h, h.sandbox.mintToken(for: device.id)!, installID: "inst-1")
            #expect(banned.status == 403)
            #expect(banned.code == "device_banned")
            #expect(try await h.request("GET", "/v1/admin/bans/pending", key: "admin").text.contains("inst-1") == false)

            #expect(try await h.post("/v1/admin/unbans", #"{"install_id":"inst-1"}"#, key: "admin").status == 202)
            let unbanned = try await Self.install(h, h.sandbox.mintToken(for: device.id)!, installID: "inst-1")
            #expect(unbanned.status == 200)
            #expect(unbanned.json?["reinstalls"]?.intValue == 1, "the unban writes 0, then this registration counts one")
        }
    }

    @Test(arguments: ServiceHarness.Mode.allCases) func bansAndUnbansByDeviceTokenApplyNow(mode: ServiceHarness.Mode) async throws {
        try await withService(mode: mode) { h in
            let device = h.freshDevice()
            let ban = try await h.post("/v1/admin/bans", #"{"device_token":"\#(device.token)","reason":"fraud"}"#, key: "admin")
            #expect(ban.status == 200)
            #expect(ban.json?["applied"]?.boolValue == true)
            #expect(h.sandbox.device(device.id)?.bits.bit1 == true)
            let claim = try await h.post("/v1/promotions/spring/claim", #"{"device_token":"\#(h.sandbox.mintToken(for: device.id)!)"}"#, key: "marketing")
            #expect(claim.code == "device_banned")
            #expect(try await h.post("/v1/admin/unbans", #"{"device_token":"\#(h.sandbox.mintToken(for: device.id)!)"}"#, key: "admin").status == 200)
            #expect(h.sandbox.device(device.id)?.bits.bit1 == false)
            #expect(try await h.post("/v1/promotions/spring/claim", #"{"device_token":"\#(h.sandbox.mintToken(for: device.id)!)"}"#, key: "marketing").status == 200)
        }
    }

    @Test(arguments: ServiceHarness.Mode.allCases) func badAdminAndInstallRequestsAre400(mode: ServiceHarness.Mode) async throws {
        try await withService(.init(extra: Self.counter), mode: mode) { h in
            let token = h.freshDevice().token
            let cases: [(String, String)] = [
                ("/v1/admin/bans", #"{"device_token":"\#(token)"}"#),                                   // reason required
                ("/v1/admin/bans", #"{"device_token":"\#(token)","reason":""}"#),                      // empty reason
                ("/v1/admin/bans", #"{"device_token":"\#(token)","reason":"\#(String(repeating: "r", count: 501))"}"#),
                ("/v1/admin/bans", #"{"device_token":"\#(token)","install_id":"i","reason":"x"}"#),    // both
                ("/v1/admin/bans", #"{"reason":"x"}"#),                                                 // neither
                ("/v1/admin/bans", #"{"install_id":"bad id!","reason":"x"}"#),
                ("/v1/admin/bans", #"{"install_id":"\#(String(repeating: "a", count: 129))","reason":"x"}"#),
                ("/v1/admin/bans", #"{"install_id":"i","reason":"x","extra":1}"#),                     // unknown field
                ("/v1/admin/unbans", #"{"install_id":7}"#),                                             // not a string
                ("/v1/installs", #"{"device_token":"\#(token)","install_id":""}"#),
                ("/v1/installs", #"{"install_id":"i"}"#),                                               // no token
            ]
            for (path, body) in cases {
                let answer = try await h.post(path, body, key: "all")
                #expect(answer.status == 400, "\(path) \(body.prefix(80)): \(answer.status) \(answer.text)")
            }
            #expect(try await h.post("/v1/installs", #"{"device_token":"not base64!"}"#, key: "mainapi").code == "invalid_device_token")
            for query in ["limit=0", "limit=501", "limit=x", "before=0", "before=x"] {
                #expect(try await h.request("GET", "/v1/admin/audit?" + query, key: "admin").status == 400, "audit?\(query)")
            }
        }
    }

    @Test(arguments: ServiceHarness.Mode.allCases) func theAuditTrailPagesNewestFirst(mode: ServiceHarness.Mode) async throws {
        try await withService(mode: mode) { h in
            for n in 0..<3 {
                #expect(try await h.post("/v1/admin/bans", #"{"install_id":"inst-\#(n)","reason":"r\#(n)"}"#, key: "admin").status == 202)
            }
            let first = try await h.request("GET", "/v1/admin/audit?limit=2", key: "admin")
            guard case .array(let page)? = first.json?["events"], let next = first.json?["next_before"]?.intValue else {
                Issue.record("no page: \(first.text)"); return
            }
            #expect(page.map { $0["subject"]?.stringValue } == ["inst-2", "inst-1"])
            #expect(page.first?["action"]?.stringValue == "ban.pending")
            let second = try await h.request("GET", "/v1/admin/audit?limit=2&before=\(next)", key: "admin")
            guard case .array(let rest)? = second.json?["events"] else { Issue.record("no page: \(second.text)"); return }
            #expect(rest.map { $0["subject"]?.stringValue } == ["inst-0"])
            #expect(second.json?["next_before"] == nil || second.json?["next_before"] == .null)
        }
    }

    @Test(arguments: ServiceHarness.Mode.allCases) func debugSecretsAreListedDeletedAndLimited(mode: ServiceHarness.Mode) async throws {
        try await withService(mode: mode) { h in
            let created = try await h.post("/v1/admin/debug-secrets", #"{"name":"qa-1"}"#, key: "admin")
            let secret = try #require(created.json?["debug_secret"]?.stringValue)
            #expect(try await h.post("/v1/admin/debug-secrets", #"{"name":"qa-1"}"#, key: "admin").code == "debug_secret_exists")
            #expect(try await h.post("/v1/admin/debug-secrets", #"{"name":"bad name"}"#, key: "admin").status == 400)
            let listed = try await h.request("GET", "/v1/admin/debug-secrets", key: "admin")
            #expect(listed.status == 200)
            #expect(listed.text.contains("qa-1"))
            #expect(!listed.text.contains(secret), "the list never shows a secret")
            #expect(try await h.request("DELETE", "/v1/admin/debug-secrets/qa-1", key: "admin").status == 204)
            #expect(try await h.request("DELETE", "/v1/admin/debug-secrets/qa-1", key: "admin").status == 404)
            let refused = try await h.post("/v1/fallback-tokens", #"{"debug_secret":"\#(secret)"}"#, key: "mainapi")
            #expect(refused.code == "invalid_debug_secret")
            let audit = try await h.request("GET", "/v1/admin/audit", key: "admin").text
            #expect(audit.contains("debug_secret.create") && audit.contains("debug_secret.delete"))
            #expect(!audit.contains(secret))
        }
    }
}
