import HTTPServer
import Policy
import UseCases

/// `POST /v1/installs`: the reinstall counter (role `tokens`).
struct InstallController: Sendable {
    let installs: InstallService
    let metrics: MetricsRegistry

    func register(in routes: inout RouteTable) {
        routes.add("POST", "/v1/installs", .role(.tokens)) { request throws(APIError) in
            let body = try request.jsonBody()
            try body.allowOnly(["device_token", "install_id"])
            let token = try body.deviceToken()
            let installID = try body.installID()
            do throws(PolicyError) {
                let outcome = try await installs.registerInstall(token: token, installID: installID, client: request.clientName)
                metrics.increment(.installs, outcome.banned ? "banned" : "registered")
                if outcome.banned { metrics.increment(.automaticBans) }
                if let kind = outcome.appliedPending {
                    metrics.increment(.pendingBansApplied, kind.rawValue)
                }
                struct Answer: Encodable { let reinstalls: Int; let banned: Bool }
                return .json(200, Answer(reinstalls: outcome.reinstalls, banned: outcome.banned))
            } catch {
                let apiError = APIError(error)
                if case .deviceBanned(let applied?) = error {
                    metrics.increment(.pendingBansApplied, applied.rawValue)
                }
                metrics.increment(.installs, apiError.code.rawValue)
                throw apiError
            }
        }
    }
}
