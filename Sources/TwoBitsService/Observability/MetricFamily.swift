import Synchronization

/// Families declared so far (each `MetricFamily` takes the next number).
private let declaredFamilies = Atomic<Int>(0)

/// A metric family: its name, help text, type and label names, declared once (below) and used by every
/// call site, so `/metrics` cannot carry two spellings of one family.
public struct MetricFamily: Sendable {
    public enum Kind: String, Sendable { case counter, gauge, histogram }

    /// The family's number, in the order of declaration: the registry keys its series by it (hashing an
    /// integer, not the name, on every update).
    let number: Int

    public let name: String
    public let help: String
    public let kind: Kind
    /// The label names, in the order call sites give their values.
    public let labels: [String]
    /// A histogram's bucket bounds, in seconds.
    public let buckets: [Double]

    /// Request and Apple latencies: from a fast sandbox to a slow Apple.
    static let latencyBuckets: [Double] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
    /// Ledger calls: tens of microseconds on SQLite, a round trip or a pool wait on PostgreSQL.
    static let ledgerBuckets: [Double] = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 2.5]

    init(_ name: String, _ kind: Kind, _ help: String, labels: [String] = [], buckets: [Double] = MetricFamily.latencyBuckets) {
        self.name = name
        self.help = help
        self.kind = kind
        self.labels = labels
        self.buckets = buckets
        self.number = declaredFamilies.wrappingAdd(1, ordering: .relaxed).newValue
    }
}

extension MetricFamily {
    // HTTP
    public static let httpRequests = MetricFamily("twobits_http_requests_total", .counter, "HTTP requests by route and status",
                                           labels: ["route", "status"])
    public static let httpReceiveTimeouts = MetricFamily("twobits_http_receive_timeouts_total", .counter,
                                                  "Connections closed because their request did not arrive within server.receive_timeout_ms")
    public static let httpRequestSeconds = MetricFamily("twobits_http_request_seconds", .histogram,
                                                 "Time from a request's arrival to its answer, by route", labels: ["route"])
    public static let httpRequestsInFlight = MetricFamily("twobits_http_requests_in_flight", .gauge,
                                                   "Requests being served now (read at each scrape)")
    public static let httpMaxConnections = MetricFamily("twobits_http_max_connections", .gauge,
                                                 "The client-connection cap in force (server.max_connections, lowered to fit the open-file limit)")
    public static let rateLimited = MetricFamily("twobits_rate_limited_total", .counter,
                                          "Requests refused with 429 before any Apple call, by client and by the limit that refused",
                                          labels: ["client", "scope"])
    // Apple
    public static let appleCalls = MetricFamily("twobits_apple_calls_total", .counter, "HTTP attempts against Apple by endpoint and outcome",
                                         labels: ["endpoint", "outcome"])
    public static let appleCallSeconds = MetricFamily("twobits_apple_call_seconds", .histogram, "Latency of HTTP attempts against Apple",
                                               labels: ["endpoint"])
    public static let appleConnectionsOpened = MetricFamily("twobits_apple_connections_opened_total", .counter,
                                                     "Connections opened to Apple's hosts (a TCP connect, and a TLS handshake over https), by host",
                                                     labels: ["host"])
    // Policy
    public static let promotionClaims = MetricFamily("twobits_promotion_claims_total", .counter, "Promotion claims by promotion and outcome",
                                              labels: ["promotion", "outcome"])
    public static let installs = MetricFamily("twobits_installs_total", .counter, "Install registrations by outcome", labels: ["outcome"])
    public static let automaticBans = MetricFamily("twobits_automatic_bans_total", .counter, "Devices banned by reaching ban_at")
    public static let manualBans = MetricFamily("twobits_manual_bans_total", .counter, "Manual bans and unbans by admins",
                                         labels: ["action", "applied"])
    public static let pendingBansApplied = MetricFamily("twobits_pending_bans_applied_total", .counter, "Pending bans and unbans applied",
                                                 labels: ["kind"])
    // Fallback tokens
    public static let fallbackTokensIssued = MetricFamily("twobits_fallback_tokens_issued_total", .counter, "Fallback tokens issued by tier",
                                                   labels: ["tier", "limited_use"])
    public static let fallbackExchangesRefused = MetricFamily("twobits_fallback_exchanges_refused_total", .counter, "Token exchanges refused by reason",
                                                       labels: ["reason"])
    public static let fallbackVerifications = MetricFamily("twobits_fallback_verifications_total", .counter, "Token verifications by result",
                                                    labels: ["result"])
    public static let fallbackConsumes = MetricFamily("twobits_fallback_consumes_total", .counter, "Consumes of limited-use tokens",
                                               labels: ["result"])
    // App Attest
    public static let appAttestRefusals = MetricFamily("twobits_app_attest_refusals_total", .counter,
                                                "App Attest challenges, attestations and assertions refused, by reason", labels: ["reason"])
    public static let appAttestFallbackReasons = MetricFamily("twobits_app_attest_fallback_reasons_total", .counter,
                                                       "Fallback tokens issued to apps that said why they did not use App Attest, by reason",
                                                       labels: ["reason"])
    public static let appAttestReceiptRefreshes = MetricFamily("twobits_app_attest_receipt_refreshes_total", .counter,
                                                        "App Attest receipt renewals at Apple's risk-metric service by outcome (docs/app-attest.md)",
                                                        labels: ["outcome"])
    public static let appAttestRequestProofs = MetricFamily("twobits_app_attest_request_proofs_total", .counter,
                                                     "Request proofs judged: valid, refused (by reason) or unanswered (storage or Apple unavailable)",
                                                     labels: ["result", "reason"])
    public static let appAttestKeysMetricUnknown = MetricFamily("twobits_app_attest_keys_metric_unknown", .gauge,
                                                         "App Attest keys used in the last 30 days still without a risk metric app_attest.risk.unknown_metric_grace_seconds after attestation (read from the ledger at most once a minute)")

    // Ledger
    public static let ledgerCallSeconds = MetricFamily("twobits_ledger_call_seconds", .histogram,
                                                "Duration of ledger calls (SQLite or PostgreSQL, a wait for a pooled connection included)",
                                                buckets: MetricFamily.ledgerBuckets)
    public static let unsavedResolutions = MetricFamily("twobits_ledger_unsaved_resolutions", .gauge,
                                                 "Audit resolutions of Apple writes the ledger failed to take, kept and retried every second (read at each scrape)")
    public static let liveReplicas = MetricFamily("twobits_live_replicas", .gauge,
                                           "Replicas serving from this ledger, as last counted (each takes its share of the rate limits)")
    // Health (read at each scrape of /metrics)
    public static let readinessCheck = MetricFamily("twobits_readiness_check", .gauge,
                                             "1 when the readiness check passes, 0 when it fails (what /readyz answers), by check",
                                             labels: ["check"])
    public static let signingKeyAge = MetricFamily("twobits_signing_key_age_seconds", .gauge,
                                            "Age of the fallback-token key this server signs with (since its creation)")

    /// Every family, for the test that each is documented and spelled once.
    public static let all: [MetricFamily] = [
        httpRequests, httpReceiveTimeouts, rateLimited, appleCalls, appleCallSeconds, appleConnectionsOpened, promotionClaims, installs, automaticBans,
        manualBans, pendingBansApplied, fallbackTokensIssued, fallbackExchangesRefused, fallbackVerifications, fallbackConsumes,
        httpRequestSeconds, httpRequestsInFlight, httpMaxConnections, readinessCheck, signingKeyAge, ledgerCallSeconds,
        unsavedResolutions, appAttestRefusals, appAttestFallbackReasons, appAttestReceiptRefreshes, liveReplicas,
        appAttestKeysMetricUnknown, appAttestRequestProofs,
    ]
}
