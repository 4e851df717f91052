import DeviceCheck
import HTTPServer
import Ledger
import UseCases

/// `/healthz` (alive), `/readyz` (configuration, keys and storage usable), `/metrics` (Prometheus).
struct HealthController: Sendable {
    let ledger: any Ledger
    let developerTokens: DeveloperTokenProvider
    let metrics: MetricsRegistry
    /// The fallback-token keys; nil when the configuration has no `tokens` section.
    let keys: KeyRing?
    /// Where the cause of a failed storage check goes (SQLite's text stays out of the public answer).
    let logger: LogWriter

    func register(in routes: inout RouteTable) {
        routes.add("GET", "/healthz", .public) { _ in .json(200, ["status": "ok"]) }
        routes.add("GET", "/readyz", .public) { _ in await readiness() }
        routes.add("GET", "/metrics", .public) { _ in
            ServerResponse(status: 200, headers: [("Content-Type", "text/plain; version=0.0.4")], body: .init(metrics.render().utf8))
        }
    }

    private func readiness() async -> ServerResponse {
        var checks: [String: String] = ["configuration": "ok"]
        // Signing proves the developer key is loaded and usable; the token is not sent anywhere.
        checks["apple_key"] = developerTokens.current().jwt.split(separator: ".").count == 3 ? "ok" : "failed"
        // A write is proven (at most every few seconds); SQLite's text stays out of this public answer.
        do { try await ledger.checkHealth(); checks["storage"] = "ok" } catch {
            switch error.kind {
            case .failed: checks["storage"] = "failed: the ledger cannot be written"
            case .unreachable: checks["storage"] = "failed: the database cannot be reached"
            case .busy: checks["storage"] = "failed: no database connection became free in time"
            }
            logger.log(.error, "readiness: the ledger cannot be written", ["detail": .string(error.message), "kind": .string(error.kind.rawValue)])
        }
        if let keys { checks["signing_keys"] = keys.hasSigningKey ? "ok" : "failed: no signing key" }
        let ready = checks.values.allSatisfy { $0 == "ok" }
        struct Body: Encodable { let ready: Bool; let checks: [String: String] }
        return .json(ready ? 200 : 503, Body(ready: ready, checks: checks))
    }
}
