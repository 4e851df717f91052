import FoundationEssentials
import Ledger
import TokenSigning
import UseCases

/// What `GET /v1/admin/overview` answers: the ledger's hourly counters summed into the console's figures
/// (claims per promotion per day, fallback tokens per hour, Apple calls with p50/p99), and the state of
/// pending bans and signing keys. Built from plain values, so it is tested without a server.
struct OverviewReport: Encodable {
    struct ClaimDay: Encodable, Equatable {
        let promotion: String
        let day: String
        var claimed: Int64 = 0
        var refused: Int64 = 0
    }

    struct TokenHour: Encodable, Equatable {
        let hour: String
        var issued: Int64 = 0
        var refused: [String: Int64] = [:]
    }

    /// One hour of App Attest adoption: strong-tier tokens against fallback tokens, and why apps fell back.
    struct AdoptionHour: Encodable, Equatable {
        let hour: String
        var strong_tier: Int64 = 0
        var fallback: Int64 = 0
        /// Fallback tokens whose app gave `app_attest_status`, by reason.
        var fallback_by_reason: [String: Int64] = [:]
        /// Fallback tokens whose app gave no reason.
        var fallback_unreported: Int64 = 0
        /// strong_tier / (strong_tier + fallback); absent in an hour without tokens.
        var strong_share: Double?
    }

    /// One hour of request proofs (docs/app-attest.md, "Request proof"): valid verdicts, and refusals by reason.
    struct ProofHour: Encodable, Equatable {
        let hour: String
        var valid: Int64 = 0
        var refused: [String: Int64] = [:]
    }

    struct AppleCalls: Encodable, Equatable {
        let endpoint: String
        let outcome: String
        let count: Int64
        /// Upper bounds of the latency buckets holding the median and the 99th percentile (nil without latencies).
        let p50_ms: Double?
        let p99_ms: Double?
    }

    struct SigningKey: Encodable, Equatable {
        let kid: String
        let active: Bool
        let activated_at: String?
        let age_seconds: Int
    }

    let generated_at: String
    let pending_bans: Int
    let claims_per_day: [ClaimDay]
    let fallback_tokens_per_hour: [TokenHour]
    let app_attest_adoption_per_hour: [AdoptionHour]
    let request_proofs_per_hour: [ProofHour]
    let apple_calls: [AppleCalls]
    let signing_keys: [SigningKey]
    /// Counts kept in memory and dropped because the ledger refused writes for too long (normally 0).
    let statistics_dropped: Int

    /// Days of claims and hours of tokens and Apple calls the report covers.
    static let claimDays = 14
    static let hours = 24
    /// Claim outcomes that are neither a claim nor a refusal (a replay of an answer, a twin still running).
    static let neutralClaimOutcomes: Set<String> = ["replayed", "in_progress"]
    /// Token subjects counted as fallback tokens issued.
    static let fallbackTiers: Set<String> = ["devicecheck", "debug"]
    /// The family of the fallback reasons apps give (`app_attest_status`): subject the reason, outcome `issued`.
    static let adoptionFamily = "app_attest_fallback"
    /// The family of request-proof verdicts: subject `appattest`, outcome `valid` or the refusal's reason.
    static let proofFamily = "request_proof"

    init(statistics: [StatisticIncrement], pendingBans: Int, keys: [SigningKeyStatus], dropped: Int, now: Date) {
        generated_at = Self.iso(now)
        pending_bans = pendingBans
        statistics_dropped = dropped
        let dayStart = StatisticIncrement.hour(of: now) - Int64(Self.claimDays - 1) * 86_400
        let hourStart = StatisticIncrement.hour(of: now) - Int64(Self.hours - 1) * 3_600

        var days: [String: ClaimDay] = [:]
        var hours: [Int64: TokenHour] = [:]
        var adoption: [Int64: AdoptionHour] = [:]
        var proofs: [Int64: ProofHour] = [:]
        var apple: [String: (endpoint: String, outcome: String, count: Int64, buckets: [Int: Int64])] = [:]
        for s in statistics {
            switch s.family {
            case "claim" where s.hour >= dayStart - 86_400:
                let day = Self.day(s.hour)
                var entry = days[s.subject + " " + day] ?? ClaimDay(promotion: s.subject, day: day)
                if s.outcome == "claimed" || s.outcome == "claimed_on_retry" { entry.claimed += s.count }
                else if !Self.neutralClaimOutcomes.contains(s.outcome) { entry.refused += s.count }
                days[s.subject + " " + day] = entry
            case "token" where s.hour >= hourStart:
                var entry = hours[s.hour] ?? TokenHour(hour: Self.hourLabel(s.hour))
                if s.outcome == "issued" { if Self.fallbackTiers.contains(s.subject) { entry.issued += s.count } }
                else if s.subject == "fallback" { entry.refused[s.outcome, default: 0] += s.count }
                hours[s.hour] = entry
                if s.outcome == "issued" {
                    var hour = adoption[s.hour] ?? AdoptionHour(hour: Self.hourLabel(s.hour))
                    if s.subject == Tier.appattest.rawValue { hour.strong_tier += s.count }
                    else if Self.fallbackTiers.contains(s.subject) { hour.fallback += s.count }
                    adoption[s.hour] = hour
                }
            case Self.adoptionFamily where s.hour >= hourStart:
                var hour = adoption[s.hour] ?? AdoptionHour(hour: Self.hourLabel(s.hour))
                hour.fallback_by_reason[s.subject, default: 0] += s.count
                adoption[s.hour] = hour
            case Self.proofFamily where s.hour >= hourStart:
                var hour = proofs[s.hour] ?? ProofHour(hour: Self.hourLabel(s.hour))
                if s.outcome == "valid" { hour.valid += s.count } else { hour.refused[s.outcome, default: 0] += s.count }
                proofs[s.hour] = hour
            case "apple" where s.hour >= hourStart:
                let key = s.subject + " " + s.outcome
                var entry = apple[key] ?? (s.subject, s.outcome, 0, [:])
                entry.count += s.count
                if s.bucket >= 0 { entry.buckets[s.bucket, default: 0] += s.count }
                apple[key] = entry
            default: break
            }
        }
        // Days are whole UTC days: the oldest one shown starts `claimDays - 1` days before today.
        let firstDay = Self.day(now.addingTimeInterval(-Double(Self.claimDays - 1) * 86_400))
        claims_per_day = days.values.filter { $0.day >= firstDay }.sorted { ($0.promotion, $0.day) < ($1.promotion, $1.day) }
        fallback_tokens_per_hour = hours.values.filter { $0.issued > 0 || !$0.refused.isEmpty }.sorted { $0.hour < $1.hour }
        app_attest_adoption_per_hour = adoption.values.map { hour in
            var hour = hour
            hour.fallback_unreported = max(0, hour.fallback - hour.fallback_by_reason.values.reduce(0, +))
            let total = hour.strong_tier + hour.fallback
            hour.strong_share = total > 0 ? Double(hour.strong_tier) / Double(total) : nil
            return hour
        }.filter { $0.strong_tier > 0 || $0.fallback > 0 || !$0.fallback_by_reason.isEmpty }.sorted { $0.hour < $1.hour }
        request_proofs_per_hour = proofs.values.sorted { $0.hour < $1.hour }
        apple_calls = apple.values.sorted { ($0.endpoint, $0.outcome) < ($1.endpoint, $1.outcome) }.map { entry in
            AppleCalls(endpoint: entry.endpoint, outcome: entry.outcome, count: entry.count,
                       p50_ms: Self.percentile(0.50, entry.buckets), p99_ms: Self.percentile(0.99, entry.buckets))
        }
        signing_keys = keys.map { key in
            SigningKey(kid: key.kid, active: key.signing, activated_at: key.activatedAt.map(Self.iso),
                       age_seconds: max(0, Int(now.timeIntervalSince(key.createdAt))))
        }
    }

    /// The upper bound of the bucket where the cumulative count reaches `q` of the total; the last bound
    /// for the overflow bucket (the latency was at least that).
    static func percentile(_ q: Double, _ buckets: [Int: Int64]) -> Double? {
        let total = buckets.values.reduce(0, +)
        guard total > 0 else { return nil }
        let bounds = StatisticsRecorder.latencyBucketsMilliseconds
        var cumulative: Int64 = 0
        for index in buckets.keys.sorted() {
            cumulative += buckets[index] ?? 0
            if Double(cumulative) >= q * Double(total) { return bounds[min(index, bounds.count - 1)] }
        }
        return bounds.last
    }

    static func iso(_ date: Date) -> String { date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: false)) }
    static func day(_ hour: Int64) -> String { String(iso(Date(timeIntervalSince1970: Double(hour))).prefix(10)) }
    static func day(_ date: Date) -> String { String(iso(date).prefix(10)) }
    static func hourLabel(_ hour: Int64) -> String { String(iso(Date(timeIntervalSince1970: Double(hour))).prefix(13)) + ":00Z" }
}
