import HTTPServer

/// `/healthz` (alive), `/readyz` (configuration, keys and storage usable), `/metrics` (Prometheus).
struct HealthController: Sendable {
    let readinessCheck: ReadinessCheck
    let metrics: MetricsRegistry

    func register(in routes: inout RouteTable) {
        routes.add("GET", "/healthz", .public) { _ in .json(200, ["status": "ok"]) }
        routes.add("GET", "/readyz", .public) { _ in await readiness() }
        routes.add("GET", "/metrics", .public) { _ in
            ServerResponse(status: 200, headers: [("Content-Type", "text/plain; version=0.0.4")], body: .init(metrics.render().utf8))
        }
    }

    private func readiness() async -> ServerResponse {
        let verdict = await readinessCheck.run()
        return .json(verdict.ready ? 200 : 503, verdict)
    }
}
