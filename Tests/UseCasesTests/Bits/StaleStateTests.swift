import DeviceCheckModel
import Foundation
import Policy
import UseCases
import Sandbox
import Ledger
import SQLiteLedger
import Testing

/// `stale_after_months`: a state older than that many months counts as never set, for claims, bans and the counter.
@Suite("Stale states count as never set")
struct StaleStateTests {
    static func roles(_ m: YearMonth) -> PolicyConfiguration {
        PolicyConfiguration(layout: .roles(bit0: .promotion, bit1: .ban), staleAfterMonths: 6,
                            promotions: [promotion("evergreen", m, from: -24, to: nil)])
    }

    @Test(arguments: [7, 12, 40])
    func aStaleClaimDoesNotBlock(monthsAgo: Int) async throws {
        try await withPolicy(Self.roles) { h in
            let d = try h.newDevice()
            h.sandbox.seed(d.id, bits: bits(1, 0), lastUpdated: h.month(-monthsAgo))
            let meaning = try await h.useCases.inspect(token: d.token)
            #expect(meaning.stale && meaning.effective == nil && meaning.claims.isEmpty)
            #expect(meaning.raw == BitState(bits: bits(1, 0), lastUpdated: h.month(-monthsAgo)))
            let e = try await h.useCases.eligibility("evergreen", token: try h.token(d.id))
            #expect(e.eligible)
            let outcome = try await h.useCases.claim("evergreen", token: try h.token(d.id), client: "marketing")
            #expect(outcome.claimedMonth == h.month)
            #expect(try h.query(d.id) == state(1, 0, h.month))
        }
    }

    @Test(arguments: [0, 1, 6])
    func aRecentEnoughClaimStillCounts(monthsAgo: Int) async throws {
        try await withPolicy(Self.roles) { h in
            let d = try h.newDevice()
            h.sandbox.seed(d.id, bits: bits(1, 0), lastUpdated: h.month(-monthsAgo))
            #expect(await failure { try await h.useCases.claim("evergreen", token: d.token, client: "marketing") } == .alreadyClaimed(h.month(-monthsAgo)))
            #expect(h.calls(.update) == 0)
        }
    }

    /// A stale ban bit does not ban, and the write that follows starts from clear bits.
    @Test(arguments: [bits(0, 1), bits(1, 1)])
    func aStaleBanDoesNotBan(seeded: Bits) async throws {
        try await withPolicy(Self.roles) { h in
            let d = try h.newDevice()
            h.sandbox.seed(d.id, bits: seeded, lastUpdated: h.month(-7))
            let admitted = try await h.useCases.admitMeaning(token: d.token, installID: nil, client: "api")
            #expect(admitted?.banned == false && admitted?.stale == true)
            let outcome = try await h.useCases.claim("evergreen", token: try h.token(d.id), client: "marketing")
            #expect(outcome.claimedMonth == h.month)
            #expect(try h.query(d.id) == state(1, 0, h.month))
        }
    }

    @Test func aRecentEnoughBanStillBans() async throws {
        try await withPolicy(Self.roles) { h in
            let d = try h.newDevice()
            h.sandbox.seed(d.id, bits: bits(0, 1), lastUpdated: h.month(-6))
            #expect(await failure { try await h.useCases.claim("evergreen", token: d.token, client: "marketing") } == .deviceBanned)
            #expect(await failure { try await h.useCases.admitMeaning(token: d.token, installID: nil, client: "api") } == .deviceBanned)
        }
    }

    /// A manual ban of a stale device starts from clear bits: the stale promotion bit is not carried along.
    @Test func aBanOfAStaleDeviceStartsFromClearBits() async throws {
        try await withPolicy(Self.roles) { h in
            let d = try h.newDevice()
            h.sandbox.seed(d.id, bits: bits(1, 0), lastUpdated: h.month(-9))
            _ = try await h.useCases.setBanned(true, token: d.token, reason: nil, client: "admin")
            #expect(try h.query(d.id) == state(0, 1, h.month))
            let event = try await #require(try h.audit().first)
            #expect(event.bitsBefore == "(1,0)@\(h.month(-9)) (stale)")
            #expect(event.bitsAfter == "(0,1)@\(h.month)")
        }
    }

    @Test(arguments: [bits(1, 1), bits(0, 1), bits(1, 0)])
    func aStaleCounterRestartsAtZero(seeded: Bits) async throws {
        try await withPolicy({ _ in PolicyConfiguration(layout: .reinstallCounter(banAt: 3), staleAfterMonths: 2) }) { h in
            let d = try h.newDevice()
            h.sandbox.seed(d.id, bits: seeded, lastUpdated: h.month(-3))
            let meaning = try await h.useCases.inspect(token: d.token)
            #expect(meaning.stale && !meaning.banned && meaning.reinstalls == nil)
            let outcome = try await h.useCases.registerInstall(token: try h.token(d.id), installID: nil, client: "api")
            #expect(outcome.reinstalls == 0 && !outcome.banned)
            #expect(try h.query(d.id) == state(0, 0, h.month))
        }
    }

    @Test func aRecentEnoughCounterContinues() async throws {
        try await withPolicy({ _ in PolicyConfiguration(layout: .reinstallCounter(banAt: 3), staleAfterMonths: 2) }) { h in
            let d = try h.newDevice()
            h.sandbox.seed(d.id, bits: bits(0, 1), lastUpdated: h.month(-2))
            let outcome = try await h.useCases.registerInstall(token: d.token, installID: nil, client: "api")
            #expect(outcome.reinstalls == 3 && outcome.banned)
            #expect(try h.query(d.id) == state(1, 1, h.month))

            let e = try h.newDevice()
            h.sandbox.seed(e.id, bits: bits(1, 1), lastUpdated: h.month(-2))
            #expect(await failure { try await h.useCases.registerInstall(token: e.token, installID: nil, client: "api") } == .deviceBanned)
            #expect(try h.query(e.id) == state(1, 1, h.month(-2)))
        }
    }
}
