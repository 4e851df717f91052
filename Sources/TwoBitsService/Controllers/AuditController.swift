import FoundationEssentials
import HTTPServer
import Ledger
import WireVocabulary

/// The audit trail (role `admin`): pages with filters, one event, and the filtered trail as CSV.
struct AuditController: Sendable {
    let ledger: any AuditLog

    /// The most rows one CSV export carries (newest first).
    static let csvRowLimit = 10_000

    func register(in routes: inout RouteTable) {
        routes.add("GET", "/v1/admin/audit", .role(.admin)) { request throws(APIError) in try await page(request) }
        routes.add("GET", "/v1/admin/audit.csv", .role(.admin)) { request throws(APIError) in try await csv(request) }
        routes.add("GET", "/v1/admin/audit/{id}", .role(.admin)) { request throws(APIError) in try await one(request) }
    }

    /// One event as the API shows it.
    struct Item: Encodable {
        let id: Int64; let at: String; let client: String; let action: String; let subject: String?
        let bits_before: String?; let bits_after: String?; let result: String; let reason: String?
        let transaction_id: String?; let token_sha256_prefix: String?; let intent_id: String?

        init(_ e: AuditEvent) {
            id = e.id; at = AdminController.iso(e.at); client = e.client; action = e.action; subject = e.subject
            bits_before = e.bitsBefore?.description; bits_after = e.bitsAfter?.description; result = e.result.rawValue; reason = e.reason
            transaction_id = e.transactionID; token_sha256_prefix = e.tokenPrefix; intent_id = e.intentID
        }
    }

    private func page(_ request: APIRequest) async throws(APIError) -> ServerResponse {
        var limit = 50
        if let text = request.http.query["limit"] {
            guard let value = Int(text), (1...500).contains(value) else { throw .badRequest("limit must be 1-500") }
            limit = value
        }
        let before = try Self.before(request)
        let filter = try Self.filter(request)
        let events: [AuditEvent]
        do { events = try await ledger.auditEvents(limit: limit, before: before, filter: filter) } catch { throw APIError.storageUnavailable(error) }
        struct Page: Encodable { let events: [Item]; let next_before: Int64? }
        return .json(200, Page(events: events.map(Item.init), next_before: events.count == limit ? events.last?.id : nil))
    }

    private func one(_ request: APIRequest) async throws(APIError) -> ServerResponse {
        guard let id = request.http.parameters["id"].flatMap({ Int64($0) }), id > 0 else {
            throw .badRequest("the event id must be a positive whole number")
        }
        let event: AuditEvent?
        do { event = try await ledger.auditEvent(id: id) } catch { throw APIError.storageUnavailable(error) }
        guard let event else { throw APIError(404, .notFound, "no audit event has id \(id)") }
        return .json(200, Item(event))
    }

    /// The filtered trail as RFC 4180 CSV, newest first, at most `csvRowLimit` rows, read in pages.
    private func csv(_ request: APIRequest) async throws(APIError) -> ServerResponse {
        let filter = try Self.filter(request)
        var before = try Self.before(request)
        var rows: [AuditEvent] = []
        while rows.count < Self.csvRowLimit {
            let wanted = min(1_000, Self.csvRowLimit - rows.count)
            let page: [AuditEvent]
            do { page = try await ledger.auditEvents(limit: wanted, before: before, filter: filter) } catch { throw APIError.storageUnavailable(error) }
            rows += page
            guard page.count == wanted, let last = page.last else { break }
            before = last.id
        }
        let body = AuditCSV.render(rows)
        return ServerResponse(status: 200, headers: [("Content-Type", "text/csv; charset=utf-8"),
                                                     ("Content-Disposition", #"attachment; filename="twobits-audit.csv""#),
                                                     ("Cache-Control", "no-store")], body: Data(body.utf8))
    }

    static func before(_ request: APIRequest) throws(APIError) -> Int64? {
        guard let text = request.http.query["before"] else { return nil }
        guard let value = Int64(text), value > 0 else { throw .badRequest("before must be an event id (a positive whole number)") }
        return value
    }

    /// The audit filters of the query string; each absent one matches all.
    static func filter(_ request: APIRequest) throws(APIError) -> AuditFilter {
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
        return AuditFilter(action: try text("action"), client: try text("client"), result: try text("result").map(AuditResult.init(rawValue:)), since: try time("since"),
                           until: try time("until"), installID: installID, tokenPrefix: tokenPrefix)
    }
}
