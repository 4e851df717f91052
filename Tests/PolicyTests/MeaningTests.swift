import DeviceCheckModel
@testable import Policy
import Testing

/// What a query answer means in a month: staleness, bans under both layouts, claims of campaigns.
@Suite struct MeaningTests {
    @Test func aStateExactlyStaleAfterMonthsOldStillCountsAndOneMoreMonthDoesNot() {
        let rules = roles(stale: 3)
        let atLimit = rules.meaning(of: state(0, 1, at: -3), in: now)
        #expect(!atLimit.stale)
        #expect(atLimit.banned)
        let past = rules.meaning(of: state(0, 1, at: -4), in: now)
        #expect(past.stale)
        #expect(!past.banned, "a stale state counts as never set")
        #expect(past.effective == nil)
        #expect(past.raw != nil, "the raw state is kept for the audit trail")
    }

    @Test func theBanBitBansAndNeverSetDoesNot() {
        #expect(roles().meaning(of: state(0, 1), in: now).banned)
        #expect(!roles().meaning(of: state(1, 0), in: now).banned)
        #expect(!roles().meaning(of: .neverSet, in: now).banned)
    }

    @Test func theCounterBansFromBanAtOn() {
        let rules = counter(banAt: 2)
        #expect(rules.meaning(of: .state(BitState(bits: Bits(counter: 1), lastUpdated: now)), in: now).banned == false)
        let atBanAt = rules.meaning(of: .state(BitState(bits: Bits(counter: 2), lastUpdated: now)), in: now)
        #expect(atBanAt.banned, "a counter equal to ban_at is banned")
        #expect(atBanAt.reinstalls == 2)
        #expect(rules.meaning(of: .neverSet, in: now).reinstalls == nil)
        #expect(rules.meaning(of: .neverSet, in: now).banned == false)
    }

    @Test func aSetPromotionBitIsAClaimOnlyWhenStampedWithinTheCampaign() {
        let rules = roles([campaign("spring", from: -2, to: 1)])
        #expect(rules.meaning(of: state(1, 0, at: -2), in: now).claims == [PromotionClaim(promotionID: "spring", month: month(-2))],
                "a claim stamped in the campaign's first month counts")
        #expect(rules.meaning(of: state(1, 0, at: -3), in: now).claims.isEmpty, "stamped before the campaign")
        #expect(rules.meaning(of: state(0, 0, at: -1), in: now).claims.isEmpty, "bit clear")
        #expect(rules.meaning(of: state(1, 0, at: 1), in: now).claims.count == 1, "stamped in the campaign's last month")
    }

    @Test func aCampaignRunsThroughItsLastMonth() {
        let spring = campaign("spring", from: -1, to: 0)
        #expect(spring.isActive(in: now))
        #expect(!spring.isActive(in: month(1)))
        #expect(!spring.isActive(in: month(-2)))
        #expect(campaign("open", from: 0, to: nil).isActive(in: month(100)))
    }

    @Test func theBaseBitsClearAnOldCampaignsClaimOnTheBitOfTheRunningOne() {
        let rules = roles([campaign("old", from: -6, to: -3), campaign("new", from: -1, to: nil)])
        #expect(rules.baseBits(for: rules.meaning(of: state(1, 1, at: -4), in: now), in: now) == bits(0, 1),
                "the old campaign's claim would read as a claim of the new one once stamped this month")
        #expect(rules.baseBits(for: rules.meaning(of: state(1, 0, at: -1), in: now), in: now) == bits(1, 0),
                "stamped in the running campaign's first month: its own claim, kept")
        #expect(rules.baseBits(for: rules.meaning(of: .neverSet, in: now), in: now) == .clear)
        #expect(roles(stale: 1).baseBits(for: roles(stale: 1).meaning(of: state(1, 1, at: -5), in: now), in: now) == .clear,
                "a stale state starts from clear bits")
    }
}
