import DeviceCheckModel
import Foundation
import Policy
import UseCases
import Sandbox
import Ledger
import SQLiteLedger
import Testing

/// `{"bit0": "promotion", "bit1": "promotion"}`: two campaigns, one per bit, claimed independently.
@Suite("Both bits are promotion bits")
struct BothBitsPromotionTests {
    static func twoCampaigns(_ m: YearMonth) -> PolicyConfiguration {
        PolicyConfiguration(layout: .roles(bit0: .promotion, bit1: .promotion), promotions: [
            promotion("a", m, from: -1, to: 1, bit: 0),
            promotion("b", m, from: 0, to: nil, bit: 1),
        ])
    }

    @Test func eachPromotionIsClaimedIndependently() async throws {
        try await withPolicy(Self.twoCampaigns) { h in
            let d = try h.newDevice()
            _ = try await h.useCases.claim("a", token: d.token, client: "marketing")
            #expect(try h.query(d.id) == state(1, 0, h.month))
            let eligibleB = try await h.useCases.eligibility("b", token: try h.token(d.id))
            #expect(eligibleB.eligible)

            let b = try await h.useCases.claim("b", token: try h.token(d.id), client: "marketing")
            #expect(b.claimedMonth == h.month && b.promotionID == "b")
            #expect(try h.query(d.id) == state(1, 1, h.month))

            #expect(await failure { try await h.useCases.claim("a", token: try h.token(d.id), client: "marketing") } == .alreadyClaimed(h.month))
            #expect(await failure { try await h.useCases.claim("b", token: try h.token(d.id), client: "marketing") } == .alreadyClaimed(h.month))
            let meaning = try await h.useCases.inspect(token: try h.token(d.id))
            #expect(Set(meaning.claims.map(\.promotionID)) == ["a", "b"])
            #expect(!meaning.banned)

            // The other order on another device.
            let e = try h.newDevice()
            _ = try await h.useCases.claim("b", token: e.token, client: "marketing")
            #expect(try h.query(e.id) == state(0, 1, h.month))
            let eligibleA = try await h.useCases.eligibility("a", token: try h.token(e.id))
            #expect(eligibleA.eligible)
            _ = try await h.useCases.claim("a", token: try h.token(e.id), client: "marketing")
            #expect(try h.query(e.id) == state(1, 1, h.month))
        }
    }

    @Test func bansAreNotEnabledAndAdmissionOnlyValidates() async throws {
        try await withPolicy(Self.twoCampaigns) { h in
            let d = try h.newDevice()
            let layout = #"{"bit0":"promotion","bit1":"promotion"}"#
            #expect(await failure { try await h.useCases.setBanned(true, token: d.token, reason: nil, client: "admin") }?.notEnabledMessage?.contains(layout) == true)
            #expect(await failure { try await h.useCases.orderPending(.ban, installID: "i", reason: nil, client: "admin") }?.notEnabledMessage?.contains(layout) == true)
            #expect(await failure { try await h.useCases.registerInstall(token: d.token, installID: nil, client: "api") }?.notEnabledMessage?.contains(layout) == true)
            #expect(h.totalCalls == 0)
            #expect(try await h.useCases.admitMeaning(token: d.token, installID: nil, client: "api") == nil)
            #expect(h.calls(.validate) == 1 && h.calls(.query) == 0 && h.calls(.update) == 0)
        }
    }

    /// Campaign "b-old" ran on bit1 months ago; "b-new" runs on bit1 now; "a" runs on bit0.
    static func resetOnTheOtherBit(_ m: YearMonth) -> PolicyConfiguration {
        PolicyConfiguration(layout: .roles(bit0: .promotion, bit1: .promotion), promotions: [
            promotion("a", m, from: -1, to: 1, bit: 0),
            promotion("b-old", m, from: -6, to: -3, bit: 1),
            promotion("b-new", m, from: -1, to: nil, bit: 1),
        ])
    }

    /// BitRules.baseBits: claiming "a" rewrites both bits with this month's stamp. A bit1 claim of "b-old"
    /// (older than the start of "b-new", the campaign running on bit1) is cleared by that write; kept, it would
    /// look like a claim of "b-new" and lock the device out of it.
    @Test func claimingOneBitClearsAnOldCampaignClaimOnTheOther() async throws {
        try await withPolicy(Self.resetOnTheOtherBit) { h in
            let d = try h.newDevice()
            h.sandbox.seed(d.id, bits: bits(0, 1), lastUpdated: h.month(-4))
            let before = try await h.useCases.inspect(token: d.token)
            #expect(before.claims.map(\.promotionID) == ["b-old"])

            _ = try await h.useCases.claim("a", token: try h.token(d.id), client: "marketing")
            #expect(try h.query(d.id) == state(1, 0, h.month))
            let e = try await h.useCases.eligibility("b-new", token: try h.token(d.id))
            #expect(e.eligible && e.reason == .eligible)
            let outcome = try await h.useCases.claim("b-new", token: try h.token(d.id), client: "marketing")
            #expect(outcome.claimedMonth == h.month)
            #expect(try h.query(d.id) == state(1, 1, h.month))
        }
    }

    /// A bit1 claim made within the running "b-new" campaign is kept by the "a" write.
    @Test func claimingOneBitKeepsACurrentCampaignClaimOnTheOther() async throws {
        try await withPolicy(Self.resetOnTheOtherBit) { h in
            let d = try h.newDevice()
            h.sandbox.seed(d.id, bits: bits(0, 1), lastUpdated: h.month(-1))
            _ = try await h.useCases.claim("a", token: d.token, client: "marketing")
            #expect(try h.query(d.id) == state(1, 1, h.month))
            #expect(await failure { try await h.useCases.claim("b-new", token: try h.token(d.id), client: "marketing") } == .alreadyClaimed(h.month))
        }
    }

    /// With no campaign running on bit1, the old claim is not touched (documented: it now carries this month).
    @Test func withNoCampaignOnTheOtherBitItsBitIsKept() async throws {
        try await withPolicy({ m in
            PolicyConfiguration(layout: .roles(bit0: .promotion, bit1: .promotion), promotions: [
                promotion("a", m, from: -1, to: 1, bit: 0),
                promotion("b-old", m, from: -6, to: -3, bit: 1),
            ])
        }) { h in
            let d = try h.newDevice()
            h.sandbox.seed(d.id, bits: bits(0, 1), lastUpdated: h.month(-4))
            _ = try await h.useCases.claim("a", token: d.token, client: "marketing")
            #expect(try h.query(d.id) == state(1, 1, h.month))
        }
    }

    /// The same normalisation from bit1's side: claiming "b" clears an old bit0 claim made before "a" started.
    @Test func theNormalisationWorksFromEitherBit() async throws {
        try await withPolicy(Self.twoCampaigns) { h in
            let d = try h.newDevice()
            h.sandbox.seed(d.id, bits: bits(1, 0), lastUpdated: h.month(-2))
            _ = try await h.useCases.claim("b", token: d.token, client: "marketing")
            #expect(try h.query(d.id) == state(0, 1, h.month))
            _ = try await h.useCases.claim("a", token: try h.token(d.id), client: "marketing")
            #expect(try h.query(d.id) == state(1, 1, h.month))
        }
    }
}
