import Foundation
import Ledger
import TestSupport
import Testing
@testable import TwoBitsService
import UseCases

/// The console's overview: the report summed from hourly counters (pure), and the route through the real
/// server after real claims, exchanges and Apple calls against the sandbox.
@Suite struct OverviewTests {
    let now = Date(timeIntervalSince1970: 1_800_000_000)   // 2027-01-15T08:00:00Z

    @Test func theReportSumsDaysHoursAndLatencyBuckets() {
        let hour = StatisticIncrement.hour(of: now)
        let s = { (f: String, sub: String, out: String, bucket: Int, h: Int64, n: Int64) in
            StatisticIncrement(family: f, subject: sub, outcome: out, bucket: bucket, hour: h, count: n)
        }
        let report = OverviewReport(statistics: [
            s("claim", "spring", "claimed", 0, hour, 3), s("claim", "spring", "claimed_on_retry", 0, hour - 3_600, 1),
            s("claim", "spring", "already_claimed", 0, hour, 2), s("claim", "spring", "replayed", 0, hour, 5),
            s("claim", "spring", "claimed", 0, hour - 20 * 86_400, 9),                      // older than 14 days
            s("token", "devicecheck", "issued", 0, hour, 4), s("token", "appattest", "issued", 0, hour, 6),
            s("token", "fallback", "reused", 0, hour, 1), s("token", "fallback", "banned", 0, hour, 2),
            s("token", "devicecheck", "issued", 0, hour - 30 * 3_600, 8),                    // older than 24 hours
            // 100 calls: 60 within 10 ms (bucket 3), 39 within 50 ms (bucket 5), 1 above 10 s (overflow, 13).
            s("apple", "query_two_bits", "200", 3, hour, 60), s("apple", "query_two_bits", "200", 5, hour, 39),
            s("apple", "query_two_bits", "200", 13, hour, 1), s("apple", "update_two_bits", "overloaded", -1, hour, 7),
        ], pendingBans: 2, keys: [SigningKeyStatus(kid: "k1", signing: true, createdAt: now.addingTimeInterval(-90_000), activatedAt: now)],
           dropped: 0, now: now)

        let days: [OverviewReport.ClaimDay] = [OverviewReport.ClaimDay(promotion: "spring", day: "2027-01-15", claimed: 4, refused: 2)]
        #expect(report.claims_per_day == days)
        let hours: [OverviewReport.TokenHour] = [OverviewReport.TokenHour(hour: "2027-01-15T08:00Z", issued: 4, refused: ["reused": 1, "banned": 2])]
        #expect(report.fallback_tokens_per_hour == hours)
        let calls: [OverviewReport.AppleCalls] = [
            OverviewReport.AppleCalls(endpoint: "query_two_bits", outcome: "200", count: 100, p50_ms: 10, p99_ms: 50),
            OverviewReport.AppleCalls(endpoint: "update_two_bits", outcome: "overloaded", count: 7, p50_ms: nil, p99_ms: nil),
        ]
        #expect(report.apple_calls == calls)
        let keys: [OverviewReport.SigningKey] = [OverviewReport.SigningKey(kid: "k1", active: true, activated_at: "2027-01-15T08:00:00Z", age_seconds: 90_000)]
        #expect(report.signing_keys == keys)
        #expect(report.pending_bans == 2)
        #expect(OverviewReport.percentile(1.0, [3: 60, 5: 39, 13: 1]) == 10_000, "the overflow bucket reports the last bound")
    }

    @Test func adoptionSetsStrongTierTokensAgainstFallbackTokensAndTheirReasons() {
        let hour = StatisticIncrement.hour(of: now)
        let s = { (f: String, sub: String, out: String, h: Int64, n: Int64) in
            StatisticIncrement(family: f, subject: sub, outcome: out, bucket: 0, hour: h, count: n)
        }
        let report = OverviewReport(statistics: [
            s("token", "appattest", "issued", hour, 6), s("token", "devicecheck", "issued", hour, 3), s("token", "debug", "issued", hour, 1),
            s("token", "fallback", "reused", hour, 5), s("token", "appattest", "nonce_mismatch", hour, 2),        // refusals: not tokens
            s(OverviewReport.adoptionFamily, "unsupported", "issued", hour, 2), s(OverviewReport.adoptionFamily, "network", "issued", hour, 1),
            s("token", "appattest", "issued", hour - 3_600, 4),                                                   // strong tier only
            s("token", "devicecheck", "issued", hour - 30 * 3_600, 8),                                            // older than 24 hours
            s(OverviewReport.adoptionFamily, "unsupported", "issued", hour - 30 * 3_600, 8),
        ], pendingBans: 0, keys: [], dropped: 0, now: now)
        let expected: [OverviewReport.AdoptionHour] = [
            OverviewReport.AdoptionHour(hour: "2027-01-15T07:00Z", strong_tier: 4, fallback: 0, fallback_by_reason: [:], fallback_unreported: 0,
                                        strong_share: 1),
            OverviewReport.AdoptionHour(hour: "2027-01-15T08:00Z", strong_tier: 6, fallback: 4, fallback_by_reason: ["unsupported": 2, "network": 1],
                                        fallback_unreported: 1, strong_share: 0.6),
        ]
        #expect(report.app_attest_adoption_per_hour == expected)
    }

    @Test func requestProofsAreSummedPerHourValidAndRefusedByReason() {
        let hour = StatisticIncrement.hour(of: now)
        let s = { (out: String, h: Int64, n: Int64) in
            StatisticIncrement(family: OverviewReport.proofFamily, subject: "appattest", outcome: out, bucket: 0, hour: h, count: n)
        }
        let report = OverviewReport(statistics: [
            s("valid", hour, 7), s("payload_mismatch", hour, 2), s("path_mismatch", hour, 1), s("valid", hour - 3_600, 3),
            s("valid", hour - 30 * 3_600, 9),                                                                      // older than 24 hours
            StatisticIncrement(family: "token", subject: "appattest", outcome: "issued", hour: hour, count: 5),   // tokens are not proofs
        ], pendingBans: 0, keys: [], dropped: 0, now: now)
        let expected: [OverviewReport.ProofHour] = [
            OverviewReport.ProofHour(hour: "2027-01-15T07:00Z", valid: 3, refused: [:]),
            OverviewReport.ProofHour(hour: "2027-01-15T08:00Z", valid: 7, refused: ["payload_mismatch": 2, "path_mismatch": 1]),
        ]
        #expect(report.request_proofs_per_hour == expected)
    }

    @Test func theOverviewShowsWhatJustHappenedThroughTheServer() async throws {
        try await withService { h in
            let device = h.freshDevice()
            let claimed = try await h.post("/v1/promotions/spring/claim", #"{"device_token":"\#(device.token)"}"#, key: "marketing")
            #expect(claimed.status == 200, "\(claimed.text)")
            let again = try await h.post("/v1/promotions/spring/claim", #"{"device_token":"\#(h.sandbox.mintToken(for: device.id)!)"}"#, key: "marketing")
            #expect(again.code == "already_claimed", "\(again.text)")
            let token = h.freshDevice().token
            #expect(try await h.post("/v1/fallback-tokens", #"{"device_token":"\#(token)"}"#, key: "mainapi").status == 201)
            #expect(try await h.post("/v1/fallback-tokens", #"{"device_token":"\#(token)"}"#, key: "mainapi").code == "device_token_reused")
            #expect(try await h.post("/v1/admin/bans", #"{"install_id":"install-9","reason":"later"}"#, key: "admin").status == 202)

            let answer = try await h.request("GET", "/v1/admin/overview", key: "admin")
            #expect(answer.status == 200, "\(answer.text)")
            let o = try #require(answer.json)
            let claims = try #require(o["claims_per_day"]?.arrayValue)
            #expect(claims.count == 1 && claims[0]["promotion"]?.stringValue == "spring")
            #expect(claims[0]["claimed"]?.intValue == 1 && claims[0]["refused"]?.intValue == 1, "\(answer.text)")
            let tokens = try #require(o["fallback_tokens_per_hour"]?.arrayValue)
            #expect(tokens.count == 1 && tokens[0]["issued"]?.intValue == 1 && tokens[0]["refused"]?["reused"]?.intValue == 1, "\(answer.text)")
            let calls = try #require(o["apple_calls"]?.arrayValue)
            #expect(!calls.isEmpty && calls.allSatisfy { $0["p50_ms"]?.intValue != nil && $0["p99_ms"]?.intValue != nil }, "\(answer.text)")
            #expect(calls.reduce(0) { $0 + ($1["count"]?.intValue ?? 0) } >= 4, "each claim and exchange called Apple: \(answer.text)")
            #expect(o["pending_bans"]?.intValue == 1)
            #expect(o["signing_keys"]?.arrayValue?.first?["active"] == .bool(true))
            #expect(try await h.request("GET", "/v1/admin/overview", key: "mainapi").status == 403)
        }
    }
}
