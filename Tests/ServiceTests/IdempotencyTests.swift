import DeviceCheckModel
import Foundation
import Sandbox
import TestSupport
import Testing
import TwoBitsCrypto
import WireFormats

/// `Idempotency-Key` on claims, to the letter of docs/openapi.yaml and docs/policy.md: a repeat replays
/// the first answer without calling Apple; a key reused for another request is refused (422) before
/// anything is read or written; keys are per client; twins running at once make one Apple update.
@Suite struct IdempotencyTests {
    /// Two promotions on two bits, so a key can be reused for another promotion id.
    static let twoPromotions = [
        "bits": #"{"bit0":"promotion","bit1":"promotion"}"#,
        "promotions": #"[{"id":"spring","starts":"2020-01","bit":0},{"id":"autumn","starts":"2020-01","bit":1}]"#,
    ]

    /// Every Apple call the sandbox has served, by endpoint.
    static func appleCalls(_ h: ServiceHarness) -> [String: Int] { h.sandbox.counters.calls }

    /// How many audit events the ledger holds (fewer than a page in these tests).
    static func auditCount(_ h: ServiceHarness) async throws -> Int {
        let page = try await h.request("GET", "/v1/admin/audit?limit=500", key: "admin")
        guard case .array(let events)? = page.json?["events"] else { Issue.record("no audit page: \(page.text)"); return -1 }
        return events.count
    }

    static func claim(_ h: ServiceHarness, _ promotion: String, token: String, key: String, client: String = "marketing") throws -> RawAnswer {
        try RawAnswer.post(port: h.service.port, path: "/v1/promotions/\(promotion)/claim", body: #"{"device_token":"\#(token)"}"#,
                           headers: [("Authorization", "Bearer " + h.keys[client]!), ("Idempotency-Key", key)])
    }

    @Test func theSameKeyAndBodyReplayTheFirstAnswerByteForByteWithoutCallingApple() async throws {
        try await withService { h in
            let device = h.freshDevice()
            let first = try Self.claim(h, "spring", token: device.token, key: "k-1")
            #expect(first.status == 200)
            #expect(first.header("Idempotent-Replayed") == nil)
            let calls = Self.appleCalls(h)
            #expect(calls["update_two_bits"] == 1)
            let audit = try await Self.auditCount(h)

            for _ in 0..<2 {
                let again = try Self.claim(h, "spring", token: device.token, key: "k-1")
                #expect(again.status == 200)
                #expect(again.body == first.body, "the replay is the first body, byte for byte")
                #expect(again.header("Idempotent-Replayed") == "true")
            }
            #expect(Self.appleCalls(h) == calls, "a replay calls Apple for nothing, not even a query")
            #expect(h.sandbox.device(device.id)?.updates == 1)
            #expect(try await Self.auditCount(h) == audit)
        }
    }

    @Test func aFinalRefusalIsReplayedToo() async throws {
        // The device claimed without a key; the keyed request's 409 already_claimed is final and replayed.
        try await withService { h in
            let device = h.freshDevice()
            #expect(try await h.post("/v1/promotions/spring/claim", #"{"device_token":"\#(device.token)"}"#, key: "marketing").status == 200)
            let refused = try Self.claim(h, "spring", token: device.token, key: "k-refused")
            #expect(refused.status == 409)
            #expect(refused.json?["error"]?["code"]?.stringValue == "already_claimed")
            let calls = Self.appleCalls(h)
            let again = try Self.claim(h, "spring", token: device.token, key: "k-refused")
            #expect(again.status == 409)
            #expect(again.body == refused.body)
            #expect(again.header("Idempotent-Replayed") == "true")
            #expect(Self.appleCalls(h) == calls)
        }
    }

    @Test func aTransientFailureIsNotStoredSoTheRetryRuns() async throws {
        // A 503 is not a final answer: the key is given back, and the retry with it reaches Apple and claims.
        try await withService(.init(apple: ["timeout_ms": "400"])) { h in
            let device = h.freshDevice()
            h.sandbox.inject(Fault(kind: .status, status: 503, count: 1_000))
            let unavailable = try Self.claim(h, "spring", token: device.token, key: "k-503")
            #expect(unavailable.status == 503)
            h.sandbox.clearFaults()
            let retry = try Self.claim(h, "spring", token: device.token, key: "k-503")
            #expect(retry.status == 200)
            #expect(retry.header("Idempotent-Replayed") == nil)
            #expect(h.sandbox.device(device.id)?.updates == 1)
        }
    }

    @Test func theSameKeyForAnotherDeviceIs422AndWritesNothing() async throws {
        try await withService { h in
            let first = h.freshDevice(), other = h.freshDevice()
            #expect(try Self.claim(h, "spring", token: first.token, key: "k-dev").status == 200)
            let calls = Self.appleCalls(h)
            let audit = try await Self.auditCount(h)

            let reused = try Self.claim(h, "spring", token: other.token, key: "k-dev")
            #expect(reused.status == 422)
            #expect(reused.json?["error"]?["code"]?.stringValue == "idempotency_key_conflict")
            #expect(reused.header("Idempotent-Replayed") == nil)
            #expect(Self.appleCalls(h) == calls, "refused before any Apple call")
            #expect(h.sandbox.device(other.id)?.updates == 0)
            #expect(h.sandbox.device(other.id)?.lastUpdated == nil)
            #expect(try await Self.auditCount(h) == audit)
            // The key stays bound to the first request: its repeat still replays.
            let repeatFirst = try Self.claim(h, "spring", token: first.token, key: "k-dev")
            #expect(repeatFirst.status == 200)
            #expect(repeatFirst.header("Idempotent-Replayed") == "true")
            // The other device is untouched and can claim under its own key.
            #expect(try Self.claim(h, "spring", token: other.token, key: "k-dev-2").status == 200)
            #expect(h.sandbox.device(other.id)?.updates == 1)
        }
    }

    @Test func anotherFreshTokenOfTheSameDeviceIsAnotherRequest() async throws {
        // The fingerprint is over the token as sent: Apple's tokens differ every time, so a retry must resend the same one.
        try await withService { h in
            let device = h.freshDevice()
            #expect(try Self.claim(h, "spring", token: device.token, key: "k-tok").status == 200)
            let calls = Self.appleCalls(h)
            let second = try Self.claim(h, "spring", token: h.sandbox.mintToken(for: device.id)!, key: "k-tok")
            #expect(second.status == 422)
            #expect(second.json?["error"]?["code"]?.stringValue == "idempotency_key_conflict")
            #expect(Self.appleCalls(h) == calls)
        }
    }

    @Test func theSameKeyForAnotherPromotionIs422AndWritesNothing() async throws {
        try await withService(.init(extra: Self.twoPromotions)) { h in
            let device = h.freshDevice()
            #expect(try Self.claim(h, "spring", token: device.token, key: "k-promo").status == 200)
            let calls = Self.appleCalls(h)
            let audit = try await Self.auditCount(h)
            let bits = h.sandbox.device(device.id)?.bits

            let reused = try Self.claim(h, "autumn", token: device.token, key: "k-promo")
            #expect(reused.status == 422)
            #expect(reused.json?["error"]?["code"]?.stringValue == "idempotency_key_conflict")
            #expect(Self.appleCalls(h) == calls)
            #expect(h.sandbox.device(device.id)?.bits == bits)
            #expect(h.sandbox.device(device.id)?.updates == 1)
            #expect(try await Self.auditCount(h) == audit)
            // Under a key of its own the other promotion is claimed.
            #expect(try Self.claim(h, "autumn", token: device.token, key: "k-promo-2").status == 200)
            #expect(h.sandbox.device(device.id)?.bits == .init(bit0: true, bit1: true))
        }
    }

    @Test func anotherRouteDoesNotUseTheKey() async throws {
        // Only the claim route takes Idempotency-Key (docs/openapi.yaml); on eligibility it is ignored:
        // neither a replay of the claim nor a conflict.
        try await withService { h in
            let device = h.freshDevice()
            #expect(try Self.claim(h, "spring", token: device.token, key: "k-route").status == 200)
            let other = try RawAnswer.post(port: h.service.port, path: "/v1/promotions/spring/eligibility", body: #"{"device_token":"\#(device.token)"}"#,
                                           headers: [("Authorization", "Bearer " + h.keys["marketing"]!), ("Idempotency-Key", "k-route")])
            #expect(other.status == 200)
            #expect(other.header("Idempotent-Replayed") == nil)
            #expect(other.json?["reason"]?.stringValue == "already_claimed")
        }
    }

    @Test func keysArePerClient() async throws {
        // docs/openapi.yaml: the key is "scoped to the client". Another client's identical key is another
        // request: it is neither replayed nor refused as a conflict, it runs.
        try await withService { h in
            let a = h.freshDevice(), b = h.freshDevice()
            #expect(try Self.claim(h, "spring", token: a.token, key: "shared", client: "all").status == 200)

            // Same key, same body, other client: runs afresh and meets the claim in place (not the 200 replay).
            let calls = Self.appleCalls(h)
            let sameBody = try Self.claim(h, "spring", token: a.token, key: "shared", client: "marketing")
            #expect(sameBody.status == 409)
            #expect(sameBody.json?["error"]?["code"]?.stringValue == "already_claimed")
            #expect(sameBody.header("Idempotent-Replayed") == nil)
            #expect(Self.appleCalls(h)["query_two_bits"] == (calls["query_two_bits"] ?? 0) + 1)

            // A key `all` used for device a, reused by `marketing` for device b: no conflict, it runs.
            #expect(try Self.claim(h, "spring", token: a.token, key: "shared-2", client: "all").status == 409)
            let otherBody = try Self.claim(h, "spring", token: b.token, key: "shared-2", client: "marketing")
            #expect(otherBody.status == 200)
            #expect(otherBody.header("Idempotent-Replayed") == nil)
            #expect(h.sandbox.device(b.id)?.updates == 1)
        }
    }

    @Test func concurrentFirstUsesOfOneKeyMakeOneAppleUpdate() async throws {
        // Apple answers slowly, so every twin arrives while the first is still running.
        try await withService(.init(sandboxLatencyMilliseconds: 300)) { h in
            let device = h.freshDevice()
            let body = #"{"device_token":"\#(device.token)"}"#
            let answers = await withTaskGroup(of: ServiceHarness.Answer?.self) { group in
                for _ in 0..<8 {
                    group.addTask { try? await h.post("/v1/promotions/spring/claim", body, key: "marketing", headers: [("Idempotency-Key", "k-twins")]) }
                }
                return await group.reduce(into: [ServiceHarness.Answer?]()) { $0.append($1) }
            }
            let outcomes = answers.map { a in a.map { "\($0.status) \($0.code ?? "")" } ?? "no answer" }
            print("idempotency twins: \(outcomes.sorted())")
            #expect(h.sandbox.counters.calls["update_two_bits"] == 1, "exactly one Apple update for one key")
            #expect(h.sandbox.device(device.id)?.updates == 1)
            #expect(outcomes.allSatisfy { $0 == "200 " || $0 == "409 request_in_progress" }, "\(outcomes)")
            #expect(outcomes.filter { $0 == "200 " }.count >= 1)
            // Once the first finished, the key replays its answer.
            let after = try Self.claim(h, "spring", token: device.token, key: "k-twins")
            #expect(after.status == 200)
            #expect(after.header("Idempotent-Replayed") == "true")
            #expect(h.sandbox.counters.calls["update_two_bits"] == 1)
        }
    }
}

/// One HTTP/1.1 exchange over a plain socket, keeping the response's headers (the test client does not).
struct RawAnswer {
    let status: Int
    let headers: [(String, String)]
    let body: Data
    var json: JSONValue? { try? JSONValue.parse(body) }

    func header(_ name: String) -> String? { headers.first { $0.0.lowercased() == name.lowercased() }?.1 }

    static func post(port: UInt16, path: String, body: String, headers: [(String, String)]) throws -> RawAnswer {
        var request = "POST \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n"
        for (name, value) in headers { request += "\(name): \(value)\r\n" }
        request += "\r\n" + body
        let received = try RawHTTP.exchange(port: port, request: request)
        // Split head and body at the first blank line; the body is everything after (Connection: close).
        let separator: [UInt8] = [13, 10, 13, 10]
        guard let cut = (0...(max(0, received.count - 4))).first(where: { Array(received[$0..<min($0 + 4, received.count)]) == separator }) else {
            throw POSIXError(.EBADMSG)
        }
        let head = String(decoding: received[..<cut], as: UTF8.self).components(separatedBy: "\r\n")
        let status = Int(head.first?.split(separator: " ").dropFirst().first ?? "") ?? -1
        let fields = head.dropFirst().compactMap { line -> (String, String)? in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        return RawAnswer(status: status, headers: fields, body: Data(received[(cut + 4)...]))
    }
}
