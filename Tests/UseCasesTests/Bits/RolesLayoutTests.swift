import DeviceCheckModel
import Foundation
import Policy
import UseCases
import Sandbox
import Ledger
import SQLiteLedger
import Testing

/// The default roles layout: bit0 is the promotion bit, bit1 the ban bit. Campaign "spring" runs from
/// last month to next month on bit0.
@Suite("Roles layout: bit0 promotion, bit1 ban")
struct RolesLayoutTests {
    static func standard(_ m: YearMonth) -> PolicyConfiguration {
        PolicyConfiguration(layout: .roles(bit0: .promotion, bit1: .ban), promotions: [promotion("spring", m, from: -1, to: 1)])
    }

    @Test func claimOnNeverSetDeviceSetsThePromotionBitAndStampsTheMonth() async throws {
        try await withPolicy(Self.standard) { h in
            let d = try h.newDevice()
            #expect(try h.query(d.id) == .neverSet)

            let outcome = try await h.useCases.claim("spring", token: d.token, client: "marketing")
            #expect(outcome.promotionID == "spring")
            #expect(outcome.claimedMonth == h.month)
            let transaction = try #require(outcome.transactionID)
            #expect(!transaction.isEmpty)

            // The promotion bit is set, the ban bit left clear, and Apple stamped this month.
            #expect(try h.query(d.id) == state(1, 0, h.month))
            #expect(try h.state(d.id).updates == 1)
            #expect(h.calls(.query) == 1 && h.calls(.update) == 1 && h.calls(.validate) == 0)

            let meaning = try await h.useCases.inspect(token: try h.token(d.id))
            #expect(meaning.claims.map(\.promotionID) == ["spring"])
            #expect(meaning.claims.first?.month == h.month)
            #expect(!meaning.banned && !meaning.stale && meaning.reinstalls == nil)
        }
    }

    /// The promotion write keeps the ban bit and the ban write keeps the promotion bit, whichever bit holds which role.
    @Test(arguments: [0, 1])
    func claimAndBanPreserveEachOthersBit(promotionBit: Int) async throws {
        let banBit = 1 - promotionBit
        let layout: BitLayout = promotionBit == 0 ? .roles(bit0: .promotion, bit1: .ban) : .roles(bit0: .ban, bit1: .promotion)
        func only(_ bit: Int) -> Bits { var b = Bits.clear; b[bit] = true; return b }
        try await withPolicy({ m in
            PolicyConfiguration(layout: layout, promotions: [promotion("spring", m, from: 0, to: nil, bit: promotionBit)])
        }) { h in
            let d = try h.newDevice()
            _ = try await h.useCases.claim("spring", token: d.token, client: "marketing")
            #expect(try h.query(d.id) == .state(BitState(bits: only(promotionBit), lastUpdated: h.month)))

            let ban = try await h.useCases.setBanned(true, token: try h.token(d.id), reason: "fraud", client: "admin")
            #expect(ban.banned && ban.applied)
            #expect(try h.query(d.id) == state(1, 1, h.month))

            _ = try await h.useCases.setBanned(false, token: try h.token(d.id), reason: nil, client: "admin")
            #expect(try h.query(d.id) == .state(BitState(bits: only(promotionBit), lastUpdated: h.month)))
            #expect(!only(promotionBit)[banBit])
            #expect(try h.state(d.id).updates == 3)
        }
    }

    /// A bit the layout leaves unused (set by something else of the team) survives a claim.
    @Test(arguments: [0, 1])
    func claimPreservesAnUnusedBit(promotionBit: Int) async throws {
        let layout: BitLayout = promotionBit == 0 ? .roles(bit0: .promotion, bit1: .unused) : .roles(bit0: .unused, bit1: .promotion)
        try await withPolicy({ m in
            PolicyConfiguration(layout: layout, promotions: [promotion("spring", m, from: -1, to: nil, bit: promotionBit)])
        }) { h in
            let d = try h.newDevice()
            var other = Bits.clear
            other[1 - promotionBit] = true
            h.sandbox.seed(d.id, bits: other, lastUpdated: h.month(-3))
            _ = try await h.useCases.claim("spring", token: d.token, client: "marketing")
            #expect(try h.query(d.id) == state(1, 1, h.month))
        }
    }

    @Test func secondClaimIsRefusedWithTheMonthOfTheFirst() async throws {
        try await withPolicy(Self.standard) { h in
            let d = try h.newDevice()
            _ = try await h.useCases.claim("spring", token: d.token, client: "marketing")
            // A fresh token of the same phone, as after a reinstall.
            let again = try h.token(d.id)
            #expect(await failure { try await h.useCases.claim("spring", token: again, client: "marketing") } == .alreadyClaimed(h.month))
            // A claim seeded earlier in the same campaign reports that month.
            let e = try h.newDevice()
            h.sandbox.seed(e.id, bits: bits(1, 0), lastUpdated: h.month(-1))
            #expect(await failure { try await h.useCases.claim("spring", token: e.token, client: "marketing") } == .alreadyClaimed(h.month(-1)))
            #expect(try h.state(d.id).updates == 1)
            #expect(try h.state(e.id).updates == 0)
            #expect(try h.query(e.id) == state(1, 0, h.month(-1)))
        }
    }

    @Test(arguments: [0, -1, -30])
    func bannedDeviceCannotClaim(bannedMonthsAgo offset: Int) async throws {
        try await withPolicy(Self.standard) { h in
            let d = try h.newDevice()
            h.sandbox.seed(d.id, bits: bits(0, 1), lastUpdated: h.month(offset))
            #expect(await failure { try await h.useCases.claim("spring", token: d.token, client: "marketing") } == .deviceBanned)
            #expect(await failure { try await h.useCases.eligibility("spring", token: d.token) } == .deviceBanned)
            #expect(await failure { try await h.useCases.admitMeaning(token: d.token, installID: nil, client: "api") } == .deviceBanned)
            #expect(try h.query(d.id) == state(0, 1, h.month(offset)))
            #expect(h.calls(.update) == 0)
        }
    }

    @Test func unknownPromotionIsRefusedWithoutCallingApple() async throws {
        try await withPolicy(Self.standard) { h in
            let d = try h.newDevice()
            #expect(await failure { try await h.useCases.claim("nope", token: d.token, client: "marketing") } == .unknownPromotion("nope"))
            #expect(await failure { try await h.useCases.eligibility("nope", token: d.token) } == .unknownPromotion("nope"))
            #expect(h.totalCalls == 0)
            #expect(try h.query(d.id) == .neverSet)
        }
    }

    /// Start and end months are inclusive.
    @Test(arguments: [(-2, 0), (0, 2), (0, 0), (0, nil), (-12, nil)] as [(Int, Int?)])
    func promotionInsideItsMonthsCanBeClaimed(start: Int, end: Int?) async throws {
        try await withPolicy({ m in
            PolicyConfiguration(layout: .roles(bit0: .promotion, bit1: .ban), promotions: [promotion("p", m, from: start, to: end)])
        }) { h in
            let d = try h.newDevice()
            let eligibility = try await h.useCases.eligibility("p", token: d.token)
            #expect(eligibility.eligible && eligibility.reason == .eligible && eligibility.claimedMonth == nil)
            let outcome = try await h.useCases.claim("p", token: d.token, client: "marketing")
            #expect(outcome.claimedMonth == h.month)
        }
    }

    @Test(arguments: [(1, 3), (-4, -1), (1, nil), (-1, -1)] as [(Int, Int?)])
    func promotionOutsideItsMonthsIsNotActive(start: Int, end: Int?) async throws {
        try await withPolicy({ m in
            PolicyConfiguration(layout: .roles(bit0: .promotion, bit1: .ban), promotions: [promotion("p", m, from: start, to: end)])
        }) { h in
            let d = try h.newDevice()
            let expected = Failure.promotionNotActive(id: "p", starts: h.month(start), ends: end.map { h.month($0) })
            #expect(await failure { try await h.useCases.claim("p", token: d.token, client: "marketing") } == expected)
            #expect(h.totalCalls == 0)

            // Eligibility reads (and writes nothing): not active.
            let eligibility = try await h.useCases.eligibility("p", token: d.token)
            #expect(!eligibility.eligible && eligibility.reason == .promotionNotActive && eligibility.claimedMonth == nil)
            #expect(h.calls(.update) == 0)
            #expect(try h.query(d.id) == .neverSet)
        }
    }

    /// A claim is a claim of the active campaign only when its month is not before the campaign's start:
    /// that is how campaigns reset.
    @Test func aClaimFromAnEarlierCampaignDoesNotBlockTheNewOne() async throws {
        try await withPolicy({ m in
            PolicyConfiguration(layout: .roles(bit0: .promotion, bit1: .ban), promotions: [
                promotion("spring", m, from: -6, to: -1),
                promotion("summer", m, from: 0, to: 2),
            ])
        }) { h in
            // Claimed spring last month.
            let old = try h.newDevice()
            h.sandbox.seed(old.id, bits: bits(1, 0), lastUpdated: h.month(-1))
            let before = try await h.useCases.inspect(token: old.token)
            #expect(before.claims.map(\.promotionID) == ["spring"])
            #expect(before.claims.first?.month == h.month(-1))

            let eligibility = try await h.useCases.eligibility("summer", token: old.token)
            #expect(eligibility.eligible && eligibility.reason == .eligible)
            let outcome = try await h.useCases.claim("summer", token: try h.token(old.id), client: "marketing")
            #expect(outcome.claimedMonth == h.month)
            #expect(try h.query(old.id) == state(1, 0, h.month))
            let after = try await h.useCases.inspect(token: try h.token(old.id))
            #expect(after.claims.map(\.promotionID) == ["summer"])
            #expect(await failure { try await h.useCases.claim("summer", token: try h.token(old.id), client: "marketing") } == .alreadyClaimed(h.month))

            // Claimed in the campaign's first month: already claimed.
            let fresh = try h.newDevice()
            h.sandbox.seed(fresh.id, bits: bits(1, 0), lastUpdated: h.month)
            #expect(await failure { try await h.useCases.claim("summer", token: fresh.token, client: "marketing") } == .alreadyClaimed(h.month))

            // The ended campaign cannot be claimed any more.
            #expect(await failure { try await h.useCases.claim("spring", token: fresh.token, client: "marketing") }
                == .promotionNotActive(id: "spring", starts: h.month(-6), ends: h.month(-1)))
        }
    }

    @Test func eligibilityAnswersWithoutWriting() async throws {
        try await withPolicy(Self.standard) { h in
            let d = try h.newDevice()
            for _ in 0..<3 {
                let e = try await h.useCases.eligibility("spring", token: try h.token(d.id))
                #expect(e.eligible && e.reason == .eligible && e.claimedMonth == nil)
            }
            #expect(try h.state(d.id).updates == 0)
            #expect(try h.query(d.id) == .neverSet)

            // A claim from an older campaign: eligible, and still untouched.
            let old = try h.newDevice()
            h.sandbox.seed(old.id, bits: bits(1, 0), lastUpdated: h.month(-3))
            let e = try await h.useCases.eligibility("spring", token: old.token)
            #expect(e.eligible && e.reason == .eligible)
            #expect(try h.query(old.id) == state(1, 0, h.month(-3)))
            #expect(try h.state(old.id).updates == 0)

            _ = try await h.useCases.claim("spring", token: d.token, client: "marketing")
            for _ in 0..<3 {
                let e = try await h.useCases.eligibility("spring", token: try h.token(d.id))
                #expect(!e.eligible && e.reason == .alreadyClaimed && e.claimedMonth == h.month)
            }
            #expect(try h.state(d.id).updates == 1)
            #expect(h.calls(.update) == 1)
            // Only the claim wrote to the ledger.
            await #expect(try h.audit().map(\.action) == ["promotion.claim"])
        }
    }

    @Test func aDeviceBannedMidCampaign() async throws {
        try await withPolicy(Self.standard) { h in
            let d = try h.newDevice()
            _ = try await h.useCases.claim("spring", token: d.token, client: "marketing")

            let ban = try await h.useCases.setBanned(true, token: try h.token(d.id), reason: "fraud", client: "admin")
            #expect(ban.banned && ban.applied)
            #expect(try h.query(d.id) == state(1, 1, h.month))

            // Banned beats already-claimed, on every client-facing call.
            #expect(await failure { try await h.useCases.claim("spring", token: try h.token(d.id), client: "marketing") } == .deviceBanned)
            #expect(await failure { try await h.useCases.eligibility("spring", token: try h.token(d.id)) } == .deviceBanned)
            #expect(await failure { try await h.useCases.admitMeaning(token: try h.token(d.id), installID: nil, client: "api") } == .deviceBanned)
            let meaning = try await h.useCases.inspect(token: try h.token(d.id))
            #expect(meaning.banned)
            #expect(meaning.claims.map(\.promotionID) == ["spring"])

            let unban = try await h.useCases.setBanned(false, token: try h.token(d.id), reason: "appeal", client: "admin")
            #expect(!unban.banned && unban.applied)
            #expect(try h.query(d.id) == state(1, 0, h.month))
            // The claim survived the ban and the unban.
            #expect(await failure { try await h.useCases.claim("spring", token: try h.token(d.id), client: "marketing") } == .alreadyClaimed(h.month))
            let admitted = try await h.useCases.admitMeaning(token: try h.token(d.id), installID: nil, client: "api")
            #expect(admitted?.banned == false)
            #expect(try h.state(d.id).updates == 3)
        }
    }

    @Test func banningANeverSetDeviceWritesOnlyTheBanBit() async throws {
        try await withPolicy(Self.standard) { h in
            let d = try h.newDevice()
            _ = try await h.useCases.setBanned(true, token: d.token, reason: nil, client: "admin")
            #expect(try h.query(d.id) == state(0, 1, h.month))
            let e = try h.newDevice()
            let outcome = try await h.useCases.setBanned(false, token: e.token, reason: nil, client: "admin")
            #expect(!outcome.banned && outcome.applied)
            #expect(try h.query(e.id) == state(0, 0, h.month))
        }
    }

    /// baseBits: a ban written while a campaign runs clears a claim of an older campaign, so the new month
    /// stamp does not turn it into a claim of the running one.
    @Test func aBanClearsAnOldCampaignClaimWhileACampaignRuns() async throws {
        try await withPolicy(Self.standard) { h in
            let d = try h.newDevice()
            h.sandbox.seed(d.id, bits: bits(1, 0), lastUpdated: h.month(-3))
            _ = try await h.useCases.setBanned(true, token: d.token, reason: nil, client: "admin")
            #expect(try h.query(d.id) == state(0, 1, h.month))
            _ = try await h.useCases.setBanned(false, token: try h.token(d.id), reason: nil, client: "admin")
            #expect(try h.query(d.id) == state(0, 0, h.month))
            let outcome = try await h.useCases.claim("spring", token: try h.token(d.id), client: "marketing")
            #expect(outcome.claimedMonth == h.month)
            #expect(try h.query(d.id) == state(1, 0, h.month))
        }
    }

    /// Documented: any write stamps the month for both bits; with no campaign running on the promotion bit
    /// an old claim is kept, and now carries this month.
    @Test func aLaterBanRestampsAnOldClaimWhenNoCampaignRuns() async throws {
        try await withPolicy({ m in
            PolicyConfiguration(layout: .roles(bit0: .promotion, bit1: .ban), promotions: [promotion("winter", m, from: -6, to: -2)])
        }) { h in
            let d = try h.newDevice()
            h.sandbox.seed(d.id, bits: bits(1, 0), lastUpdated: h.month(-3))
            _ = try await h.useCases.setBanned(true, token: d.token, reason: nil, client: "admin")
            #expect(try h.query(d.id) == state(1, 1, h.month))
        }
    }

    @Test func invalidDeviceTokenIsReportedAndNothingIsWritten() async throws {
        try await withPolicy(Self.standard) { h in
            let unknown = try #require(DeviceToken(Data(repeating: 7, count: 600).base64EncodedString()))
            #expect(await failure { try await h.useCases.claim("spring", token: unknown, client: "marketing") } == .apple(.invalidDeviceToken))
            #expect(await failure { try await h.useCases.setBanned(true, token: unknown, reason: nil, client: "admin") } == .apple(.invalidDeviceToken))
            #expect(h.calls(.update) == 0)
            await #expect(try h.audit().isEmpty)
        }
    }

    @Test func installRegistrationIsNotEnabledAndNamesTheLayout() async throws {
        try await withPolicy(Self.standard) { h in
            let d = try h.newDevice()
            let f = await failure { try await h.useCases.registerInstall(token: d.token, installID: "i", client: "api") }
            let message = try #require(f?.notEnabledMessage)
            #expect(message.contains(#"{"bit0":"promotion","bit1":"ban"}"#))
            #expect(h.totalCalls == 0)
        }
    }

    /// A roles layout without a ban bit has no ban meaning: bans are refused, admission only validates.
    @Test func withoutABanBitBansAreNotEnabled() async throws {
        try await withPolicy({ m in
            PolicyConfiguration(layout: .roles(bit0: .promotion, bit1: .unused), promotions: [promotion("spring", m, from: 0, to: nil)])
        }) { h in
            let d = try h.newDevice()
            let layout = #"{"bit0":"promotion","bit1":"unused"}"#
            #expect(await failure { try await h.useCases.setBanned(true, token: d.token, reason: nil, client: "admin") }?.notEnabledMessage?.contains(layout) == true)
            #expect(await failure { try await h.useCases.orderPending(.ban, installID: "i", reason: nil, client: "admin") }?.notEnabledMessage?.contains(layout) == true)
            #expect(h.totalCalls == 0)
            let admitted = try await h.useCases.admitMeaning(token: d.token, installID: "i", client: "api")
            #expect(admitted == nil)
            #expect(h.calls(.validate) == 1 && h.calls(.query) == 0)
            await #expect(try h.ledger.pendingActions().isEmpty)
        }
    }

    /// A roles layout without a promotion bit refuses claims and names the layout.
    @Test func withoutAPromotionBitClaimsAreNotEnabled() async throws {
        try await withPolicy({ _ in
            PolicyConfiguration(layout: .roles(bit0: .ban, bit1: .unused), promotions: [])
        }) { h in
            let d = try h.newDevice()
            let layout = #"{"bit0":"ban","bit1":"unused"}"#
            #expect(await failure { try await h.useCases.claim("spring", token: d.token, client: "m") }?.notEnabledMessage?.contains(layout) == true)
            #expect(await failure { try await h.useCases.eligibility("spring", token: d.token) }?.notEnabledMessage?.contains(layout) == true)
            _ = try await h.useCases.setBanned(true, token: d.token, reason: nil, client: "admin")
            #expect(try h.query(d.id) == state(1, 0, h.month))
        }
    }
}
