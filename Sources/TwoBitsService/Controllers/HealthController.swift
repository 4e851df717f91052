import HTTPServer

/// `/healthz` (alive), `/readyz` (configuration, keys and storage usable), `/metrics` (Prometheus).
struct HealthController: Sendable {
    let readinessCheck: ReadinessCheck
    let metrics: MetricsRegistry
    let gauges: ScrapeTimeGauges

    func register(in routes: inout RouteTable) {
        routes.add("GET", "/healthz", .public) { _ in .json(200, ["status": "ok"]) }
        routes.add("GET", "/readyz", .public) { _ in await readiness() }
        routes.add("GET", "/metrics", .public) { _ in
            // The readiness checks as gauges, so alerts see what /readyz answers (the storage verdict is cached 2 s).
            for (check, verdict) in await readinessCheck.run().checks { metrics.set(.readinessCheck, check.rawValue, to: verdict.passed ? 1 : 0) }
            await gauges.refresh()
            return ServerResponse(status: 200, headers: [("Content-Type", "text/plain; version=0.0.4")], body: .init(metrics.render().utf8))
        }
    }

    private func readiness() async -> ServerResponse {
        let verdict = await readinessCheck.run()
        return .json(verdict.ready ? 200 : 503, verdict)
    }
}
