import DeviceCheckModel
@testable import Policy
import Testing

/// A claim's decision and the eligibility answer, from the device's meaning and the month.
@Suite struct ClaimRulesTests {
    let rules = roles([campaign("spring", from: -1, to: 1), campaign("later", from: 2, to: nil)])

    @Test func aFreeDeviceClaimsByWritingThePromotionBitOnTheBaseBits() throws {
        let spring = try rules.claimablePromotion("spring", in: now)
        #expect(try rules.claim(spring, on: rules.meaning(of: .neverSet, in: now), in: now, resuming: false) == .write(bits(1, 0)))
    }

    @Test func aSecondClaimIsRefusedWithTheMonthOfTheFirst() throws {
        let spring = try rules.claimablePromotion("spring", in: now)
        let claimed = rules.meaning(of: state(1, 0, at: -1), in: now)
        #expect(refusal { try rules.claim(spring, on: claimed, in: now, resuming: false) } == "alreadyClaimed(\(month(-1)))")
        #expect(try rules.claim(spring, on: claimed, in: now, resuming: true) == .inPlace(claimedMonth: month(-1)),
                "a resuming request finds its own claim in place")
    }

    @Test func aClaimOfAnotherCampaignDoesNotCount() throws {
        let rules = BitRules(configuration: PolicyConfiguration(layout: .roles(bit0: .promotion, bit1: .promotion),
                                                                promotions: [campaign("spring", from: -1, to: 1), campaign("other", from: -1, to: 1, bit: 1)]))
        let spring = try rules.claimablePromotion("spring", in: now)
        let other = rules.meaning(of: state(0, 1, at: -1), in: now)
        #expect(other.claims.map(\.promotionID) == ["other"])
        #expect(try rules.claim(spring, on: other, in: now, resuming: false) == .write(bits(1, 1)))
    }

    @Test func aBannedDeviceClaimsNothingEvenWithNoClaimYet() throws {
        let spring = try rules.claimablePromotion("spring", in: now)
        #expect(refusal { try rules.claim(spring, on: rules.meaning(of: state(0, 1), in: now), in: now, resuming: false) } == "deviceBanned(appliedPending: nil)")
        #expect(refusal { try rules.eligibility(spring, on: rules.meaning(of: state(0, 1), in: now), in: now) } == "deviceBanned(appliedPending: nil)")
    }

    @Test func onlyARunningCampaignOfAPromotionLayoutIsClaimable() {
        #expect(refusal { try rules.claimablePromotion("later", in: now) }?.hasPrefix("promotionNotActive") == true)
        #expect(refusal { try rules.claimablePromotion("nope", in: now) } == "unknownPromotion(\"nope\")")
        #expect(refusal { try counter(banAt: 3).claimablePromotion("spring", in: now) }?.hasPrefix("notEnabled") == true)
    }

    @Test func eligibilitySaysWhyNot() throws {
        let spring = try rules.promotion("spring"), later = try rules.promotion("later")
        let free = rules.meaning(of: .neverSet, in: now)
        #expect(try rules.eligibility(spring, on: free, in: now) == Eligibility(eligible: true, reason: .eligible, claimedMonth: nil))
        #expect(try rules.eligibility(later, on: free, in: now) == Eligibility(eligible: false, reason: .promotionNotActive, claimedMonth: nil))
        #expect(try rules.eligibility(spring, on: rules.meaning(of: state(1, 0), in: now), in: now)
                == Eligibility(eligible: false, reason: .alreadyClaimed, claimedMonth: now))
    }
}
