import DeviceCheckModel
import Foundation
import OutboundHTTP
import Sandbox
import TestSupport
import Testing
import TwoBitsCrypto
import WireFormats

/// The write log (`GET /sandbox/v1/writes`): every accepted update, in order, with its device, bits, time
/// and transaction id, and nothing Apple refused; the fault campaign matches it to the audit trail one by one.
@Suite struct SandboxWriteLogTests {
    typealias Raw = SandboxStrictnessTests.Raw

    @Test func everyAcceptedUpdateIsLoggedInOrderAndNothingRefused() async throws {
        try await withSandbox { h in
            let raw = try Raw(h)
            defer { raw.http.shutdown() }
            let (a, b) = (h.device(), h.device())
            let tokenA = try #require(h.sandbox.mintToken(for: a)), tokenB = try #require(h.sandbox.mintToken(for: b))
            let started = Int64(Date().timeIntervalSince1970 * 1000)
            func update(_ token: String, _ transaction: String, _ bits: [String: Any]) async throws -> Int {
                var fields = raw.fields(token, extra: bits)
                fields["transaction_id"] = transaction
                return try await raw.post(.update, fields: fields).status
            }
            #expect(try await update(tokenA, "t-1", ["bit0": true, "bit1": false]) == 200)
            #expect(try await update("bm90IGEgdG9rZW4=", "t-refused", ["bit0": true, "bit1": true]) == 400)
            h.sandbox.inject(Fault(kind: .status, status: 503, endpoint: "update_two_bits"))
            #expect(try await update(tokenB, "t-faulted", ["bit0": true, "bit1": true]) == 503)
            h.sandbox.inject(Fault(kind: .status, status: 503, endpoint: "update_two_bits", apply: true))
            #expect(try await update(tokenB, "t-2", ["bit0": false, "bit1": true]) == 503) // written, then answered 503
            #expect(try await update(tokenA, "t-3", ["bit1": true]) == 200)
            #expect(try await raw.post(.query, fields: raw.fields(tokenA)).status == 200)

            let log = h.sandbox.writes()
            #expect(log.writes.map(\.transactionID) == ["t-1", "t-2", "t-3"])
            #expect(log.writes.map(\.sequence) == [1, 2, 3] && log.oldest == 1 && log.total == 3)
            #expect(log.writes.map(\.deviceID) == [a, b, a])
            #expect(log.writes.map(\.bit0) == [true, false, nil], "a bit left out is logged as absent")
            #expect(log.writes.map(\.bit1) == [false, true, true])
            #expect(log.writes.allSatisfy { (started - 1...started + 10_000).contains($0.atMilliseconds) })
            #expect(h.sandbox.device(a)?.updates == 2 && h.sandbox.device(b)?.updates == 1, "the log agrees with the counters")
        }
    }

    @Test func theLogIsReadInPagesOverTheControlAPI() async throws {
        try await withSandbox { h in
            let raw = try Raw(h)
            defer { raw.http.shutdown() }
            let device = h.device()
            let token = try #require(h.sandbox.mintToken(for: device))
            for _ in 0..<5 { #expect(try await raw.post(.update, fields: raw.fields(token, extra: ["bit0": true, "bit1": true])).status == 200) }

            let first = try await h.control("GET", "/sandbox/v1/writes?limit=2")
            #expect(first.status == 200)
            guard case .array(let page)? = first.json?["writes"] else { Issue.record("no writes"); return }
            #expect(page.compactMap { $0["sequence"]?.intValue } == [1, 2])
            #expect(page.first?["device_id"]?.stringValue == device && page.first?["bit0"]?.boolValue == true)
            #expect(page.first?["transaction_id"]?.stringValue?.isEmpty == false && page.first?["at_ms"]?.intValue != nil)
            #expect(first.json?["next_after"]?.intValue == 2 && first.json?["total"]?.intValue == 5 && first.json?["oldest"]?.intValue == 1)

            let last = try await h.control("GET", "/sandbox/v1/writes?after=4&limit=1000")
            guard case .array(let rest)? = last.json?["writes"] else { Issue.record("no writes"); return }
            #expect(rest.compactMap { $0["sequence"]?.intValue } == [5])
            #expect(last.json?["next_after"] == nil, "no next page after the last")
            let beyond = try await h.control("GET", "/sandbox/v1/writes?after=9")
            #expect(beyond.json?["writes"] == .array([]))

            for query in ["limit=0", "limit=1001", "limit=x", "after=-1", "after=x"] {
                #expect(try await h.control("GET", "/sandbox/v1/writes?\(query)").status == 400, "\(query)")
            }
        }
    }
}
