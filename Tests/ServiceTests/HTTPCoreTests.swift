import DeviceCheckModel
import Foundation
import OutboundHTTP
import Sandbox
import TestSupport
import Testing
import TwoBitsCrypto
import TwoBitsService

/// The HTTP core through real loopback HTTP: errors, authentication, roles, limits, request ids, logs; the tests
/// with a `mode` argument run in process as well (`ServiceHarness.Mode`).
@Suite struct HTTPCoreTests {
    @Test(arguments: ServiceHarness.Mode.allCases) func validateAnswersTrueForARealTokenAndFalseForOneAppleRejects(mode: ServiceHarness.Mode) async throws {
        try await withService(mode: mode) { h async throws in
            let device = h.freshDevice()
            let ok = try await h.post("/v1/devices/validate", #"{"device_token":"\#(device.token)"}"#, key: "marketing")
            #expect(ok.status == 200)
            #expect(ok.json == .object(["valid": .bool(true)]))
            // Well-formed base64 that Apple never issued.
            let unknown = try await h.post("/v1/devices/validate", #"{"device_token":"\#(SecureRandom.bytes(2000).base64EncodedString())"}"#, key: "mainapi")
            #expect(unknown.status == 200)
            #expect(unknown.json == .object(["valid": .bool(false)]))
        }
    }

    /// Issue 40: `Bearer` then exactly one space and a key without whitespace; more spaces, a tab or a space inside
    /// the key are refused with 400 (a proxy or logger in front may read another key from them), trailing
    /// whitespace is not part of the value. Over loopback HTTP and in process.
    @Test(arguments: ServiceHarness.Mode.allCases) func aBearerCredentialHasOneForm(mode: ServiceHarness.Mode) async throws {
        try await withService(mode: mode) { h async throws in
            let key = try #require(h.keys["admin"])
            for value in ["Bearer  " + key, "Bearer \t" + key, "Bearer " + key + " x"] {
                let answer = try await h.request("GET", "/v1/admin/audit", key: nil, headers: [("Authorization", value)])
                #expect(answer.status == 400 && answer.code == "bad_request", "\(value.debugDescription): \(answer.text)")
                if mode == .inProcess { #expect(answer.header("Connection") == "close") }
            }
            let trailing = try await h.request("GET", "/v1/admin/audit", key: nil, headers: [("Authorization", "Bearer " + key + " ")])
            #expect(trailing.status == 200, "\(trailing.text)")
            let unknown = try await h.request("GET", "/v1/admin/audit", key: nil, headers: [("Authorization", "Bearer tb_wrong")])
            #expect(unknown.status == 401 && unknown.code == "unauthorized")
        }
    }

    @Test func badInputGetsTheDocumentedErrorAndTheServerStaysHealthy() async throws {
        try await withService { h async throws in
            let path = "/v1/devices/validate"
            let cases: [(String, String?, String?, Int, String)] = [
                // body, key, content type, status, code
                ("{", "all", "application/json", 400, "bad_request"),
                ("[1,2]", "all", "application/json", 400, "bad_request"),
                (#"{"device_token":42}"#, "all", "application/json", 400, "bad_request"),
                (#"{}"#, "all", "application/json", 400, "bad_request"),
                (#"{"device_token":"abc","extra":1}"#, "all", "application/json", 400, "bad_request"),
                (#"{"device_token":"not base64!"}"#, "all", "application/json", 400, "invalid_device_token"),
                (#"{"device_token":"QUJD"}"#, nil, "application/json", 401, "unauthorized"),
                (#"{"device_token":"QUJD"}"#, "tb_wrong", "application/json", 401, "unauthorized"),
                (#"{"device_token":"QUJD"}"#, "all", "text/plain", 415, "unsupported_media_type"),
            ]
            for (body, key, type, status, code) in cases {
                let answer = try await h.request("POST", path, key: key, body: body, contentType: type)
                #expect(answer.status == status, "\(body) \(key ?? "-")")
                #expect(answer.code == code, "\(body): \(answer.text)")
                #expect(answer.json?["error"]?["message"]?.stringValue?.isEmpty == false)
            }
            // The parser's reason reaches the client: a depth past the limit, a key given twice.
            let nested = try await h.post(path, String(repeating: "[", count: 60_000))
            #expect(nested.status == 400 && nested.code == "bad_request")
            #expect(nested.json?["error"]?["message"]?.stringValue == "the body is not valid JSON: nesting deeper than 32 at byte 32")
            let twice = try await h.post(path, #"{"device_token":"QUJD","device_token":"not base64!"}"#)
            #expect(twice.status == 400 && twice.code == "bad_request")
            #expect(twice.json?["error"]?["message"]?.stringValue == #"the body is not valid JSON: duplicate key "device_token" at byte 23"#)
            // Refused from its declared length, before the body is read, and the connection closed: curl, still
            // sending the body, may see its send fail before it reads the answer (in a parallel `swift test`), a
            // race on the client's side. The request is then made again.
            let oversized = #"{"device_token":""# + String(repeating: "A", count: 70_000) + #""}"#
            var big = try? await h.post(path, oversized)
            for _ in 0..<4 where big == nil { big = try? await h.post(path, oversized) }
            #expect(big?.status == 413)
            #expect(big?.code == "payload_too_large")
            let unknown = try await h.request("GET", "/v1/nothing-here")
            #expect(unknown.status == 404 && unknown.code == "not_found")
            let wrongMethod = try await h.request("GET", path)
            #expect(wrongMethod.status == 405 && wrongMethod.code == "method_not_allowed")
            #expect(wrongMethod.response.status == 405)
            let health = try await h.request("GET", "/healthz", key: nil)
            #expect(health.status == 200)
        }
    }

    /// In process the answer's headers are at hand (libcurl's client here keeps none): the pipeline frames every
    /// answer as the server sends it, and no port is open.
    @Test func inProcessAnswersAreFramedByThePipelineWithoutAPort() async throws {
        try await withService(mode: .inProcess) { h async throws in
            #expect(h.service.port == 0)
            let health = try await h.request("GET", "/healthz", key: nil, headers: [("X-Request-Id", "in-process-1")])
            #expect(health.status == 200)
            #expect(health.header("X-Request-Id") == "in-process-1")
            #expect(health.header("Cache-Control") == "no-store")
            let wrongMethod = try await h.request("GET", "/v1/devices/validate")
            #expect(wrongMethod.status == 405 && wrongMethod.code == "method_not_allowed")
            #expect(wrongMethod.header("Allow") == "POST")
            #expect(wrongMethod.header("Content-Type") == "application/json")
            #expect(wrongMethod.header("X-Request-Id")?.count == 24, "made by the pipeline")
            #expect(try await h.request("GET", "/.well-known/jwks.json", key: nil).header("Cache-Control") == "public, max-age=300")
            let unsupported = try await h.request("POST", "/v1/devices/validate", body: "{}", contentType: "text/plain")
            #expect(unsupported.status == 415 && unsupported.code == "unsupported_media_type")
            // A query the edge refuses is refused in process as well (the same decoder).
            #expect(try await h.request("GET", "/v1/admin/audit?limit=1&limit=2", key: "admin").code == "bad_request")
        }
    }

    @Test(arguments: ServiceHarness.Mode.allCases) func rolesAreEnforcedPerRoute(mode: ServiceHarness.Mode) async throws {
        try await withService(mode: mode) { h async throws in
            let token = h.freshDevice().token
            let body = #"{"device_token":"\#(token)"}"#
            #expect(try await h.post("/v1/promotions/spring/eligibility", body, key: "mainapi").code == "forbidden")
            #expect(try await h.post("/v1/installs", body, key: "marketing").code == "forbidden")
            #expect(try await h.post("/v1/admin/devices/state", body, key: "marketing").code == "forbidden")
            #expect(try await h.post("/v1/promotions/spring/eligibility", body, key: "marketing").status == 200)
            #expect(try await h.request("GET", "/v1/admin/audit", key: "admin").status == 200)
        }
    }

    @Test func slowClientsDoNotBlockOthers() async throws {
        try await withService { h in
            // Open connections that send half a request and stall.
            var sockets: [Int32] = []
            for _ in 0..<20 {
                let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
                var addr = sockaddr_in()
                addr.sin_family = sa_family_t(AF_INET)
                addr.sin_port = h.service.port.bigEndian
                addr.sin_addr.s_addr = inet_addr("127.0.0.1")
                let connected = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
                #expect(connected == 0)
                let partial = "POST /v1/devices/validate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n{\"dev"
                _ = partial.withCString { send(fd, $0, strlen($0), 0) }
                sockets.append(fd)
            }
            let device = h.freshDevice()
            let answer = try await h.post("/v1/devices/validate", #"{"device_token":"\#(device.token)"}"#)
            #expect(answer.status == 200)
            for fd in sockets { close(fd) }
            #expect(try await h.request("GET", "/healthz", key: nil).status == 200)
        }
    }

    @Test(arguments: ServiceHarness.Mode.allCases) func requestIDsAreEchoedOrGenerated(mode: ServiceHarness.Mode) async throws {
        let h = try await withService(mode: mode) { h in
            let echoed = try await h.request("GET", "/healthz", key: nil, headers: [("X-Request-Id", "abc-123")])
            #expect(echoed.response.status == 200)
            return h
        } // closed here: request lines are written in batches; closing flushes them
        let lines = h.logLines.withLock { $0 }
        #expect(lines.contains { $0.contains(#""request_id":"abc-123""#) })
        // The request line: one JSON object, its fields after ts/level/msg sorted by name (as every line's are).
        let line = try #require(lines.first { $0.contains(#""request_id":"abc-123""#) })
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(object["msg"] as? String == "request")
        #expect(object["method"] as? String == "GET")
        #expect(object["route"] as? String == "/healthz")
        #expect(object["status"] as? Int == 200)
        #expect(object["client"] as? String == "-")
        #expect(object["duration_ms"] is Double || object["duration_ms"] is Int)
        let order = ["\"ts\"", "\"level\"", "\"msg\"", "\"client\"", "\"duration_ms\"", "\"method\"", "\"request_id\"", "\"route\"", "\"status\""]
            .map { line.range(of: $0)?.lowerBound }
        #expect(!order.contains(nil) && order.map { $0! } == order.map { $0! }.sorted(), "\(line)")
    }

    @Test(arguments: ServiceHarness.Mode.allCases) func logsNeverContainTokensKeysOrJWTs(mode: ServiceHarness.Mode) async throws {
        let (h, device) = try await withService(mode: mode) { h in
            let device = h.freshDevice()
            let body = #"{"device_token":"\#(device.token)"}"#
            _ = try await h.post("/v1/devices/validate", body)
            _ = try await h.post("/v1/promotions/spring/claim", body, key: "marketing")
            _ = try await h.post("/v1/admin/bans", #"{"device_token":"\#(device.token)","reason":"test"}"#, key: "admin")
            let issued = try await h.post("/v1/fallback-tokens", #"{"device_token":"\#(h.sandbox.mintToken(for: device.id)!)"}"#, key: "mainapi")
            _ = try await h.post("/v1/devices/validate", body, key: "tb_not_a_key")
            #expect(issued.status == 403) // banned
            return (h, device)
        } // closed here: request lines are written in batches; closing flushes them
        let log = h.logLines.withLock { $0.joined() }
        #expect(!log.isEmpty)
        #expect(!log.contains(String(device.token.prefix(40))))
        for key in h.keys.values { #expect(!log.contains(key)) }
        #expect(!log.contains("tb_not_a_key"))
        #expect(!log.contains("eyJ")) // no JWT of any kind
        #expect(!log.contains("PRIVATE KEY"))
    }

    @Test(arguments: ServiceHarness.Mode.allCases) func metricsCountRequestsAndAppleCalls(mode: ServiceHarness.Mode) async throws {
        try await withService(mode: mode) { h in
            let device = h.freshDevice()
            _ = try await h.post("/v1/devices/validate", #"{"device_token":"\#(device.token)"}"#)
            let metrics = try await h.request("GET", "/metrics", key: nil).text
            #expect(metrics.contains(#"twobits_http_requests_total{route="/v1/devices/validate",status="200"} 1"#))
            #expect(metrics.contains(#"twobits_apple_calls_total{endpoint="query_two_bits",outcome="not_found"} 1"#))
            #expect(metrics.contains("twobits_apple_call_seconds_bucket{endpoint=\"query_two_bits\",le=\"+Inf\"} 1"))
            let ready = try await h.request("GET", "/readyz", key: nil)
            #expect(ready.status == 200 && ready.json?["ready"] == .bool(true))
        }
    }
}
