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
        routes.add("DELETE", "/v1/admin/bans/pending/{install_id}", .role(.admin)) { request throws(APIError) in try await cancelPending(request) }
        routes.add("GET", "/v1/admin/audit", .role(.admin)) { request throws(APIError) in try await audit(request) }
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
                throw APIError(400, "confirmation_mismatch", "confirm must be the last 6 characters of the device's token_sha256_prefix (or of the install id); nothing was written")
            }
        }
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

    /// Withdraws a pending order by install id (audited); 404 when there is none.
    private func cancelPending(_ request: APIRequest) async throws(APIError) -> ServerResponse {
        let installID = request.http.parameters["install_id"] ?? ""
        guard RequestBody.isInstallID(installID) else { throw .badRequest("install_id must be 1-128 characters of A-Z a-z 0-9 . _ -") }
        let found: PendingDeviceAction?
        do { found = try await ledger.pendingAction(installID: installID) } catch { throw .storageUnavailable(error) }
        guard let order = found else { throw APIError(404, "not_found", "no pending order for install id \(installID)") }
        do {
            try await ledger.removePendingAction(installID: installID)
            try await ledger.record(AuditEvent(client: request.clientName, action: .pendingCancelled, subject: installID, result: "ok",
                                               reason: "\(order.kind.rawValue) ordered by \(order.client) withdrawn"))
        } catch { throw .storageUnavailable(error) }
        struct Answer: Encodable { let cancelled: Bool; let install_id: String }
        return .json(200, Answer(cancelled: true, install_id: installID))
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
        let filter = try Self.auditFilter(request)
        let events: [AuditEvent]
        do { events = try await ledger.auditEvents(limit: limit, before: before, filter: filter) } catch { throw APIError.storageUnavailable(error) }
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

    /// The audit filters of the query string; each absent one matches all.
    static func auditFilter(_ request: APIRequest) throws(APIError) -> AuditFilter {
        let query = request.http.query
        func text(_ name: String, max: Int = 128) throws(APIError) -> String? {
            guard let value = query[name] else { return nil }
            guard (1...max).contains(value.utf8.count), !value.unicodeScalars.contains(where: RequestBody.isControl) else {
                throw .badRequest("\(name) must be 1-\(max) characters without control characters")
            }
            return value
        }
        func time(_ name: String) throws(APIError) -> Date? {
            guard let value = query[name] else { return nil }
            let plain = Date.ISO8601FormatStyle(), fractional = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
            guard let date = (try? plain.parse(value)) ?? (try? fractional.parse(value)) else {
                throw .badRequest("\(name) must be an RFC 3339 time such as 2026-11-24T00:00:00Z")
            }
            return date
        }
        let installID = try text("install_id")
        if let installID, !RequestBody.isInstallID(installID) { throw .badRequest("install_id must be 1-128 characters of A-Z a-z 0-9 . _ -") }
        let tokenPrefix = try text("token_prefix", max: 64)
        if let tokenPrefix, !tokenPrefix.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }) {
            throw .badRequest("token_prefix must be lowercase hex (the token_sha256_prefix of devices/state)")
        }
        return AuditFilter(action: try text("action"), client: try text("client"), result: try text("result"), since: try time("since"),
                           until: try time("until"), installID: installID, tokenPrefix: tokenPrefix)
    }

    static func iso(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }
}
