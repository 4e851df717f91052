import DeviceCheckModel
import Foundation
import Policy
import UseCases
import Sandbox
import Ledger
import SQLiteLedger
import Testing

/// With Apple failing, operations answer `.apple(.unavailable)` and write nothing half-way; after recovery
/// the same request succeeds.
@Suite("Apple failing")
struct AppleFailureTests {
    static func roles(_ m: YearMonth) -> PolicyConfiguration {
        PolicyConfiguration(layout: .roles(bit0: .promotion, bit1: .ban), promotions: [promotion("spring", m, from: -1, to: nil)])
    }

    /// Short, so each failing call gives up quickly.
    static let timeout = 300
    /// Failing only the update needs the query before it to get through even on a busy machine.
    static let updateOnlyTimeout = 2_000

    @Test func aClaimFailsWhollyWhileAppleAnswers503AndSucceedsAfterRecovery() async throws {
        try await withPolicy(clientTimeoutMilliseconds: Self.timeout, Self.roles) { h in
            let fresh = try h.newDevice()
            let old = try h.newDevice()
            h.sandbox.seed(old.id, bits: bits(1, 0), lastUpdated: h.month(-3))
            h.sandbox.inject(Fault(kind: .status, status: 503, count: 1000))

            #expect(await failure { try await h.useCases.claim("spring", token: fresh.token, client: "marketing") }?.isAppleUnavailable == true)
            #expect(await failure { try await h.useCases.claim("spring", token: old.token, client: "marketing") }?.isAppleUnavailable == true)
            #expect(try h.query(fresh.id) == .neverSet)
            #expect(try h.query(old.id) == state(1, 0, h.month(-3)))
            #expect(try h.state(fresh.id).updates == 0 && h.state(old.id).updates == 0)
            await #expect(try h.audit().allSatisfy { $0.result != .ok })

            h.sandbox.clearFaults()
            let a = try await h.useCases.claim("spring", token: fresh.token, client: "marketing")
            let b = try await h.useCases.claim("spring", token: old.token, client: "marketing")
            #expect(a.claimedMonth == h.month && b.claimedMonth == h.month)
            #expect(try h.query(fresh.id) == state(1, 0, h.month))
            #expect(try h.query(old.id) == state(1, 0, h.month))
        }
    }

    static let faults: [Fault] = [
        Fault(kind: .status, status: 429, count: 1000),
        Fault(kind: .status, status: 500, count: 1000),
        Fault(kind: .drop, count: 1000),
        Fault(kind: .timeout, count: 1000, delayMilliseconds: 400),
    ]

    /// Throttling, other 5xx, dropped connections and timeouts fail a claim as cleanly as a 503.
    @Test(arguments: faults)
    func otherTransientFailuresAlsoWriteNothing(fault: Fault) async throws {
        try await withPolicy(clientTimeoutMilliseconds: Self.timeout, Self.roles) { h in
            let d = try h.newDevice()
            h.sandbox.seed(d.id, bits: bits(0, 0), lastUpdated: h.month(-2))
            h.sandbox.inject(fault)
            #expect(await failure { try await h.useCases.claim("spring", token: d.token, client: "marketing") }?.isAppleUnavailable == true)
            #expect(try h.query(d.id) == state(0, 0, h.month(-2)))
            #expect(try h.state(d.id).updates == 0)
            h.sandbox.clearFaults()
            _ = try await h.useCases.claim("spring", token: d.token, client: "marketing")
            #expect(try h.query(d.id) == state(1, 0, h.month))
        }
    }

    /// The read works, the write fails: the bits are unchanged and the ledger records the failed attempt.
    @Test func aFailedUpdateIsAuditedAsFailedAndLeavesTheBits() async throws {
        try await withPolicy(clientTimeoutMilliseconds: Self.updateOnlyTimeout, Self.roles) { h in
            let d = try h.newDevice()
            h.sandbox.inject(Fault(kind: .status, status: 503, count: 1000, endpoint: AppleEndpoint.update.rawValue))
            let started = ContinuousClock.now
            let f = await failure { try await h.useCases.claim("spring", token: d.token, client: "marketing") }
            #expect(f?.isAppleUnavailable == true)
            // The read got through; only the write failed.
            #expect(h.sandbox.counters.statuses["200"] == 1 && h.calls(.update) >= 1, "\(String(describing: f)) after \(ContinuousClock.now - started); \(h.sandbox.counters)")
            #expect(try h.query(d.id) == .neverSet)
            let failed = try await #require(try h.audit().first)
            #expect(failed.action == "promotion.claim" && failed.result == .failed && failed.client == "marketing")
            #expect(failed.bitsBefore == "never-set" && failed.bitsAfter == nil && failed.transactionID == nil)
            #expect(failed.reason?.contains("503") == true)
            #expect(failed.tokenPrefix == String(ReferenceSHA256.hex(d.token.base64).prefix(12)))

            h.sandbox.clearFaults()
            let outcome = try await h.useCases.claim("spring", token: d.token, client: "marketing")
            #expect(outcome.transactionID != nil)
            #expect(try h.query(d.id) == state(1, 0, h.month))
            await #expect(try h.audit().map(\.result) == [.ok, .failed])
        }
    }

    @Test func bansAndInstallsFailWhollyToo() async throws {
        try await withPolicy(clientTimeoutMilliseconds: Self.updateOnlyTimeout, { _ in PolicyConfiguration(layout: .reinstallCounter(banAt: 3)) }) { h in
            let d = try h.newDevice()
            h.sandbox.seed(d.id, bits: bits(1, 0), lastUpdated: h.month(-1))
            _ = try await h.useCases.orderPending(.ban, installID: "install-1", reason: nil, client: "admin")
            h.sandbox.inject(Fault(kind: .status, status: 503, count: 1000, endpoint: AppleEndpoint.update.rawValue))

            // Three writes at once, so their deadlines overlap. Each reads, then fails to write.
            let policy = h.useCases, token = d.token
            async let install = failure { try await policy.registerInstall(token: token, installID: nil, client: "api") }
            async let ban = failure { try await policy.setBanned(true, token: token, reason: nil, client: "admin") }
            // The pending ban cannot be applied: it stays pending.
            async let admission = failure { try await policy.admitMeaning(token: token, installID: "install-1", client: "api") }
            let failures = await [install, ban, admission]
            #expect(failures.allSatisfy { $0?.isAppleUnavailable == true }, "\(failures)")
            await #expect(try h.audit().filter { $0.result == .failed }.map(\.action).sorted() == ["ban", "ban.applied", "install.register"])
            await #expect(try h.ledger.pendingActions().map(\.installID) == ["install-1"])
            #expect(try h.query(d.id) == state(1, 0, h.month(-1)))

            h.sandbox.clearFaults()
            #expect(await failure { try await h.useCases.admitMeaning(token: d.token, installID: "install-1", client: "api") } == .deviceBanned)
            #expect(try h.query(d.id) == state(1, 1, h.month))
            await #expect(try h.ledger.pendingActions().isEmpty)
        }
    }

    /// A single 503 is retried inside the call's deadline.
    @Test func aTransient503IsRetried() async throws {
        try await withPolicy(clientTimeoutMilliseconds: 2_000, Self.roles) { h in
            let d = try h.newDevice()
            h.sandbox.inject(Fault(kind: .status, status: 503, count: 1, endpoint: AppleEndpoint.update.rawValue))
            let outcome = try await h.useCases.claim("spring", token: d.token, client: "marketing")
            #expect(outcome.claimedMonth == h.month)
            #expect(try h.query(d.id) == state(1, 0, h.month))
            #expect(h.sandbox.counters.statuses["503"] == 1)
            await #expect(try h.audit().map(\.result) == [.ok])
        }
    }
}

@Suite("Apple failing: audit time")
struct FailedWriteClockTests {
    /// Every audit event is stamped with the policy's `now` clock; the event of a failed write should be too.
    @Test
    func aFailedWriteIsStampedWithThePolicyClock() async throws {
        try await withPolicy(clientTimeoutMilliseconds: AppleFailureTests.updateOnlyTimeout, AppleFailureTests.roles) { h in
            let d = try h.newDevice()
            h.sandbox.inject(Fault(kind: .status, status: 503, count: 1000, endpoint: AppleEndpoint.update.rawValue))
            #expect(await failure { try await h.useCases.claim("spring", token: d.token, client: "marketing") }?.isAppleUnavailable == true)
            let failed = try await #require(try h.audit().first)
            #expect(failed.result == .failed)
            #expect(failed.at == h.date, "the failed event carries the wall clock instead of the policy's clock")
        }
    }
}
