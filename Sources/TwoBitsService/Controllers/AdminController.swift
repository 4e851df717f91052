import DeviceCheckModel
import FoundationEssentials
import HTTPServer
import Policy
import Ledger
import UseCases
import WireVocabulary

/// Bans, unbans, device state and pending orders (role `admin`); the audit trail is `AuditController`.
struct AdminController: Sendable {
    let bans: BanService
    let pendingOrders: PendingOrderService
    let metrics: MetricsRegistry

    func register(in routes: inout RouteTable) {
        routes.add("POST", "/v1/admin/bans", .role(.admin)) { request throws(APIError) in try await order(request, ban: true) }
        routes.add("POST", "/v1/admin/unbans", .role(.admin)) { request throws(APIError) in try await order(request, ban: false) }
        routes.add("POST", "/v1/admin/devices/state", .role(.admin)) { request throws(APIError) in try await state(request) }
        routes.add("GET", "/v1/admin/bans/pending", .role(.admin)) { _ throws(APIError) in try await pending() }
        routes.add("DELETE", "/v1/admin/bans/pending/{install_id}", .role(.admin)) { request throws(APIError) in try await cancelPending(request) }
    }

    private func order(_ request: APIRequest, ban: Bool) async throws(APIError) -> ServerResponse {
        let body = try request.jsonBody()
        try body.allowOnly(["device_token", "install_id", "reason", "confirm"])
        let reason = try body.reason(required: ban)
        let hasToken = body.fields["device_token"] != nil
        let installID = try body.installID()
        guard hasToken != (installID != nil) else { throw .badRequest("give exactly one of device_token or install_id") }
        let token = hasToken ? try body.deviceToken() : nil
        // The console's typed confirmation, checked here so that no client can skip it: the last 6 characters
        // of the token's digest prefix (what `devices/state` shows) or of the install id. Checked before anything is written.
        if let confirm = try body.optionalString("confirm") {
            let expected = String((token?.shortDigest ?? installID ?? "").suffix(6))
            guard confirm == expected else {
                throw APIError(400, .confirmationMismatch, "confirm must be the last 6 characters of the device's token_sha256_prefix (or of the install id); nothing was written")
            }
        }
        struct Answer: Encodable { let banned: Bool; let applied: Bool; let install_id: String? }
        do throws(PolicyError) {
            if hasToken {
                let outcome = try await bans.setBanned(ban, token: token!, reason: reason, client: request.clientName)
                count(ban, applied: true)
                return .json(200, Answer(banned: outcome.banned, applied: true, install_id: nil))
            }
            let outcome = try await pendingOrders.order(ban ? .ban : .unban, installID: installID!, reason: reason, client: request.clientName)
            count(ban, applied: false)
            return .json(202, Answer(banned: outcome.banned, applied: false, install_id: installID))
        } catch { throw APIError(error) }
    }

    private func count(_ ban: Bool, applied: Bool) {
        metrics.increment(.manualBans, ban ? "ban" : "unban", applied ? "now" : "pending")
    }

    private func state(_ request: APIRequest) async throws(APIError) -> ServerResponse {
        let body = try request.jsonBody()
        try body.allowOnly(["device_token"])
        let token = try body.deviceToken()
        let meaning: DeviceMeaning
        do throws(PolicyError) { meaning = try await bans.inspect(token: token) } catch { throw APIError(error) }
        return .json(200, DeviceStateReport(meaning: meaning, layout: bans.layout, tokenPrefix: token.shortDigest))
    }

    private func pending() async throws(APIError) -> ServerResponse {
        let actions: [PendingDeviceAction]
        do { actions = try await pendingOrders.pendingOrders() } catch { throw APIError.storageUnavailable(error) }
        struct Item: Encodable { let install_id: String; let action: String; let reason: String?; let client: String; let created_at: String }
        let items = actions.map { Item(install_id: $0.installID, action: $0.kind.rawValue, reason: $0.reason, client: $0.client, created_at: Self.iso($0.createdAt)) }
        return .json(200, ["pending": items])
    }

    /// Withdraws a pending order by install id (audited); 404 when there is none.
    private func cancelPending(_ request: APIRequest) async throws(APIError) -> ServerResponse {
        let installID = request.http.parameters["install_id"] ?? ""
        guard RequestBody.isInstallID(installID) else { throw .badRequest("install_id must be 1-128 characters of A-Z a-z 0-9 . _ -") }
        let withdrawn: PendingDeviceAction?
        do { withdrawn = try await pendingOrders.withdraw(installID: installID, client: request.clientName) } catch { throw .storageUnavailable(error) }
        guard withdrawn != nil else { throw APIError(404, .notFound, "no pending order for install id \(installID)") }
        struct Answer: Encodable { let cancelled: Bool; let install_id: String }
        return .json(200, Answer(cancelled: true, install_id: installID))
    }

    static func iso(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }
}
