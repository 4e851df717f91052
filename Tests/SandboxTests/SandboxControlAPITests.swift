import DeviceCheckModel
import Foundation
import OutboundHTTP
import Sandbox
import TestSupport
import Testing
import TwoBitsCrypto
import WireFormats

/// The sandbox's control API (`/sandbox/v1/...`, docs/sandbox.md) over real HTTP: what the Python suites
/// and the benchmarks drive, including its refusals of malformed control requests.
@Suite struct SandboxControlAPITests {
    static func call(_ h: SandboxHarness, _ method: String, _ path: String, _ body: String? = nil) async throws -> (status: Int, json: JSONValue?) {
        try await h.control(method, path, body)
    }

    @Test func devicesAreCreatedSeededReadAndGivenTokens() async throws {
        try await withSandbox { h in
            let created = try await Self.call(h, "POST", "/sandbox/v1/devices")
            #expect(created.status == 201)
            let id = try #require(created.json?["device_id"]?.stringValue)
            #expect(created.json?["last_update_time"] == .null)

            let seeded = try await Self.call(h, "PUT", "/sandbox/v1/devices/\(id)", #"{"bit0":true,"bit1":false,"last_update_time":"2024-05"}"#)
            #expect(seeded.status == 200)
            #expect(h.sandbox.device(id)?.queryResult == .state(BitState(bits: Bits(bit0: true, bit1: false), lastUpdated: YearMonth("2024-05")!)))
            let read = try await Self.call(h, "GET", "/sandbox/v1/devices/\(id)")
            #expect(read.json?["bit0"]?.boolValue == true)
            #expect(read.json?["last_update_time"]?.stringValue == "2024-05")
            #expect(try await Self.call(h, "PUT", "/sandbox/v1/devices/\(id)", #"{"last_update_time":null}"#).status == 200)
            #expect(h.sandbox.device(id)?.queryResult == .neverSet)

            let one = try await Self.call(h, "POST", "/sandbox/v1/devices/\(id)/tokens")
            let token = try #require(one.json?["device_token"]?.stringValue)
            #expect(h.sandbox.deviceID(forToken: token) == id)
            let many = try await Self.call(h, "POST", "/sandbox/v1/devices/\(id)/tokens", #"{"count":3,"environment":"development"}"#)
            guard case .array(let tokens)? = many.json?["device_tokens"] else { Issue.record("no tokens"); return }
            #expect(Set(tokens.compactMap(\.stringValue)).count == 3)
        }
    }

    @Test func freshDeviceTokensEachBelongToANewDeviceThatWasNeverSet() async throws {
        try await withSandbox { h in
            let before = h.sandbox.deviceCount
            let minted = try await Self.call(h, "POST", "/sandbox/v1/device-tokens", #"{"count":5,"environment":"development"}"#)
            #expect(minted.status == 201)
            guard case .array(let values)? = minted.json?["device_tokens"] else { Issue.record("no tokens"); return }
            let tokens = values.compactMap(\.stringValue)
            #expect(tokens.count == 5 && Set(tokens).count == 5)
            let devices = tokens.compactMap { h.sandbox.deviceID(forToken: $0) }
            #expect(Set(devices).count == 5, "one new device per token")
            #expect(h.sandbox.deviceCount == before + 5)
            #expect(devices.allSatisfy { h.sandbox.device($0)?.queryResult == .neverSet })
            #expect(tokens.allSatisfy { (2_500...3_500).contains($0.count) })
            for (body, status) in [(#"{"count":0}"#, 400), (#"{"count":10001}"#, 400), (#"{"count":"5"}"#, 400), ("[5]", 400),
                                   (#"{"count":1,"environment":"staging"}"#, 400), (#"{"count":1,"environment":5}"#, 400)] {
                #expect(try await Self.call(h, "POST", "/sandbox/v1/device-tokens", body).status == status, "\(body)")
            }
            #expect(h.sandbox.deviceCount == before + 5, "a refused batch creates no device")
        }
    }

    @Test func malformedControlRequestsAreRefused() async throws {
        try await withSandbox { h in
            let id = h.device()
            let refusals: [(String, String, String?, Int)] = [
                ("GET", "/sandbox/v1/devices/nope", nil, 404),
                ("PUT", "/sandbox/v1/devices/nope", #"{"bit0":true}"#, 404),
                ("PUT", "/sandbox/v1/devices/\(id)", "[1]", 400),
                ("PUT", "/sandbox/v1/devices/\(id)", #"{"bit0":"yes"}"#, 400),
                ("PUT", "/sandbox/v1/devices/\(id)", #"{"bit1":1}"#, 400),
                ("PUT", "/sandbox/v1/devices/\(id)", #"{"last_update_time":"2024-13"}"#, 400),
                ("POST", "/sandbox/v1/devices/nope/tokens", nil, 404),
                ("POST", "/sandbox/v1/devices/\(id)/tokens", #"{"count":0}"#, 400),
                ("POST", "/sandbox/v1/devices/\(id)/tokens", #"{"environment":"staging"}"#, 400),
                ("POST", "/sandbox/v1/devices/\(id)/tokens", #"{"environment":true}"#, 400),
                ("POST", "/sandbox/v1/faults", #"{"kind":"explode","count":1}"#, 400),
                ("POST", "/sandbox/v1/faults", #"{"kind":"status","status":503,"count":1,"endpoint":"nowhere"}"#, 400),
                ("PUT", "/sandbox/v1/latency", #"{"milliseconds":-1}"#, 400),
                ("PUT", "/sandbox/v1/latency", #"{"milliseconds":600001}"#, 400),
            ]
            for (method, path, body, status) in refusals {
                let answer = try await Self.call(h, method, path, body)
                #expect(answer.status == status, "\(method) \(path) \(body ?? ""): \(answer.status)")
                #expect(answer.json?["error"]?.stringValue != nil)
            }
            // Nothing was changed by the refusals.
            #expect(h.sandbox.device(id)?.queryResult == .neverSet)
            #expect(h.sandbox.latencyMilliseconds == 0)
        }
    }

    @Test func faultsLatencyAndCountersAreControlled() async throws {
        try await withSandbox { h in
            let client = try h.client(timeoutMilliseconds: 2_000)
            let token = try h.token(h.device())
            #expect(try await Self.call(h, "POST", "/sandbox/v1/faults", #"{"kind":"status","status":500,"count":1000,"endpoint":"query_two_bits"}"#).status == 201)
            await #expect(throws: DeviceCheckError.self) { _ = try await client.query(token) }
            #expect(try await Self.call(h, "DELETE", "/sandbox/v1/faults").status == 200)
            #expect(try await client.query(token) == .neverSet)

            #expect(try await Self.call(h, "PUT", "/sandbox/v1/latency", #"{"milliseconds":5}"#).json?["milliseconds"]?.intValue == 5)
            #expect(h.sandbox.latencyMilliseconds == 5)

            let counters = try await Self.call(h, "GET", "/sandbox/v1/counters")
            #expect((counters.json?["calls"]?["query_two_bits"]?.intValue ?? 0) >= 2)
            let reset = try await Self.call(h, "DELETE", "/sandbox/v1/counters")
            #expect(reset.json?["calls"]?.objectValue?.isEmpty == true)
            #expect(try await Self.call(h, "GET", "/sandbox/v1/healthz").json?["status"]?.stringValue == "ok")
        }
    }
}
