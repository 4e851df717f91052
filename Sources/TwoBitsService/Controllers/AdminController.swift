import DeviceCheck
import FoundationEssentials
import HTTPServer
import Policy
import Ledger

/// Bans, unbans, device state, pending orders and the audit trail (role `admin`).
struct AdminController: Sendable {
    let policy: BitPolicy
    let ledger: any Ledger
    let metrics: MetricsRegistry

    func register(in routes: inout RouteTable) {
        routes.add("POST", "/v1/admin/bans", .role(.admin)) { request throws(APIError) in try await order(request, ban: true) }
        routes.add("POST", "/v1/admin/unbans", .role(.admin)) { request throws(APIError) in try await order(request, ban: false) }
        routes.add("POST", "/v1/admin/devices/state", .role(.admin)) { request throws(APIError) in try await state(request) }
        routes.add("GET", "/v1/admin/bans/pending", .role(.admin)) { _ throws(APIError) in try await pending() }
        routes.add("GET", "/v1/admin/audit", .role(.admin)) { request throws(APIError) in try await audit(request) }
    }

    private func order(_ request: APIRequest, ban: Bool) async throws(APIError) -> ServerResponse {
        let body = try request.jsonBody()
        try body.allowOnly(["device_token", "install_id", "reason"])
        let reason = try body.reason(required: ban)
        let hasToken = body.fields["device_token"] != nil
        let installID = try body.installID()
        guard hasToken != (installID != nil) else { throw .badRequest("give exactly one of device_token or install_id") }
        let token = hasToken ? try body.deviceToken() : nil
        struct Answer: Encodable { let banned: Bool; let applied: Bool; let install_id: String? }
        do throws(PolicyError) {
            if hasToken {
                let outcome = try await policy.setBanned(ban, token: token!, reason: reason, client: request.clientName)
                count(ban, applied: true)
                return .json(200, Answer(banned: outcome.banned, applied: true, install_id: nil))
            }
            let outcome = try await policy.orderPending(ban ? .ban : .unban, installID: installID!, reason: reason, client: request.clientName)
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
        do throws(PolicyError) { meaning = try await policy.inspect(token: token) } catch { throw APIError(error) }
        return .json(200, DeviceStateReport(meaning: meaning, layout: policy.layout, tokenPrefix: token.shortDigest))
    }

    private func pending() async throws(APIError) -> ServerResponse {
        let actions: [PendingDeviceAction]
        do { actions = try await ledger.pendingActions() } catch { throw APIError.storageUnavailable(error) }
        struct Item: Encodable { let install_id: String; let action: String; let reason: String?; let client: String; let created_at: String }
        let items = actions.map { Item(install_id: $0.installID, action: $0.kind.rawValue, reason: $0.reason, client: $0.client, created_at: Self.iso($0.createdAt)) }
        return .json(200, ["pending": items])
    }

    private func audit(_ request: APIRequest) async throws(APIError) -> ServerResponse {
        var limit = 50
        if let text = request.http.query["limit"] {
            guard let value = Int(text), (1...500).contains(value) else { throw .badRequest("limit must be 1-500") }
            limit = value
        }
        var before: Int64?
        if let text = request.http.query["before"] {
            guard let value = Int64(text), value > 0 else { throw .badRequest("before must be an event id (a positive whole number)") }
            before = value
        }
        let events: [AuditEvent]
        do { events = try await ledger.auditEvents(limit: limit, before: before) } catch { throw APIError.storageUnavailable(error) }
        struct Item: Encodable {
            let id: Int64; let at: String; let client: String; let action: String; let subject: String?
            let bits_before: String?; let bits_after: String?; let result: String; let reason: String?
            let transaction_id: String?; let token_sha256_prefix: String?; let intent_id: String?
        }
        struct Page: Encodable { let events: [Item]; let next_before: Int64? }
        let items = events.map {
            Item(id: $0.id, at: Self.iso($0.at), client: $0.client, action: $0.action, subject: $0.subject, bits_before: $0.bitsBefore,
                 bits_after: $0.bitsAfter, result: $0.result, reason: $0.reason, transaction_id: $0.transactionID, token_sha256_prefix: $0.tokenPrefix,
                 intent_id: $0.intentID)
        }
        return .json(200, Page(events: items, next_before: events.count == limit ? events.last?.id : nil))
    }

    static func iso(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }
}
