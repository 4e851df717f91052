import DeviceCheckModel
import Foundation
import SQLiteLedger
import TestSupport
import Testing

/// The audit trail's bits as the admin API and the console show them: the text the ledger stores, byte for byte,
/// in `/v1/admin/audit`, `/v1/admin/audit/{id}` and `/v1/admin/audit.csv`, including a text another version wrote.
@Suite struct AuditBitsTextTests {
    @Test func theAuditTrailShowsTheStoredBitsText() async throws {
        try await withService { h in
            let token = h.freshDevice().token
            let month = YearMonth(containing: Date())
            #expect(try await h.post("/v1/promotions/spring/claim", #"{"device_token":"\#(token)"}"#, key: "marketing").status == 200)
            #expect(try await h.post("/v1/admin/bans", #"{"device_token":"\#(token)","reason":"fraud"}"#, key: "admin").status == 200)

            let page = try await h.request("GET", "/v1/admin/audit", key: "admin")
            // Keys sorted, as every JSON answer is: bits_after before bits_before.
            #expect(page.text.contains(#""bits_after":"(1,1)@\#(month)","bits_before":"(1,0)@\#(month)","client":"admin""#), "\(page.text)")
            #expect(page.text.contains(#""bits_after":"(1,0)@\#(month)","bits_before":"never-set","client":"marketing""#), "\(page.text)")

            let ledger = try SQLiteConnection(path: h.directory + "/ledger.sqlite")
            try ledger.execute("UPDATE audit_events SET bits_before = 'v9:(1,0,1)@2026-11', bits_after = '(1,0)@2026-11 (stale) (stale)' "
                               + "WHERE action = 'promotion.claim'")
            guard case .array(let events)? = try await h.request("GET", "/v1/admin/audit", key: "admin").json?["events"],
                  let claim = events.first(where: { $0["action"]?.stringValue == "promotion.claim" }), let id = claim["id"]?.intValue else {
                Issue.record("no claim event"); return
            }
            #expect(claim["bits_before"]?.stringValue == "v9:(1,0,1)@2026-11" && claim["bits_after"]?.stringValue == "(1,0)@2026-11 (stale) (stale)")
            let one = try await h.request("GET", "/v1/admin/audit/\(id)", key: "admin")
            #expect(one.text.contains(#""bits_after":"(1,0)@2026-11 (stale) (stale)","bits_before":"v9:(1,0,1)@2026-11""#), "\(one.text)")
            let csv = try await h.request("GET", "/v1/admin/audit.csv", key: "admin").text
            #expect(csv.contains(#",promotion.claim,spring,"v9:(1,0,1)@2026-11","(1,0)@2026-11 (stale) (stale)",ok,"#), "\(csv)")
            #expect(csv.contains(#",ban,,"(1,0)@\#(month)","(1,1)@\#(month)",ok,"#), "\(csv)")
        }
    }
}
