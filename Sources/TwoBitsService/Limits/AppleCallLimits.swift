import WireVocabulary

/// The rate limits in front of the routes that call Apple: each client's bucket and the global
/// ceiling on Apple calls are checked before the handler runs, so a refused request never reaches Apple.
struct AppleCallLimits: Sendable {
    /// The routes that call Apple, with the most Apple calls one request makes (retries aside):
    /// the global ceiling is charged that many, each client's bucket one per request.
    static let appleCallsByRoute: [String: Int] = [
        "/v1/devices/validate": 1,
        "/v1/promotions/{id}/eligibility": 1,
        "/v1/promotions/{id}/claim": 2,
        "/v1/installs": 3,
        "/v1/fallback-tokens": 2,
        "/v1/admin/bans": 2,
        "/v1/admin/unbans": 2,
        "/v1/admin/devices/state": 1,
    ]

    let limiter: RateLimiter
    let metrics: MetricsRegistry

    /// `replicas`: the live replica count, by which the configured limits (the deployment's totals) are shared.
    init(configuration: ServiceConfiguration, replicas: LiveReplicas, metrics: MetricsRegistry) {
        var limits: [String: RateLimiter.Limit] = [:]
        for client in configuration.clients {
            if let rate = client.ratePerSecond { limits[client.name] = RateLimiter.Limit(ratePerSecond: rate, burst: client.burst) }
        }
        self.limiter = RateLimiter(limits: limits, globalPerSecond: configuration.apple.maxCallsPerSecond, replicas: replicas)
        self.metrics = metrics
    }

    /// Throws 429 `rate_limited` with Retry-After when `client` is over its limit or the service over
    /// its ceiling on an Apple-calling `route`; counts the refusal.
    func admit(_ client: AuthenticatedClient?, route: String) throws(APIError) {
        guard let cost = Self.appleCallsByRoute[route], let client else { return }
        guard case .refused(let scope, let retryAfter) = limiter.admit(client: client.name, globalCost: cost) else { return }
        metrics.increment(.rateLimited, client.name, scope.rawValue)
        let message = scope == .client
            ? "client \(client.name) is over its rate limit for routes that call Apple; retry after \(retryAfter) s"
            : "the service is at its ceiling of Apple calls per second; retry after \(retryAfter) s"
        throw APIError(429, .rateLimited, message, retryAfterSeconds: retryAfter)
    }
}
