import DeviceCheckModel
import Foundation
import HTTPServer
@testable import Policy
@testable import TwoBitsService
import Testing
@testable import UseCases

/// The claim's answer is written by hand (the hot route): it must be the document JSONEncoder with sorted
/// keys writes, whatever the promotion id holds.
@Suite struct ClaimAnswerTests {
    struct Claimed: Encodable {
        let promotion: String
        let claimed: Bool
        let claimed_month: String
    }

    @Test(arguments: ["spring", "spring/2026", #"a "quoted" \ id"#, "été-promo", "tab\there"])
    func theHandWrittenAnswerIsWhatJSONEncoderWrites(_ id: String) throws {
        let month = try #require(YearMonth("2026-11"))
        let answer = PromotionController.answer(.claimed(ClaimOutcome(promotionID: id, claimedMonth: month, transactionID: "t")), promotion: id)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let expected = try encoder.encode(Claimed(promotion: id, claimed: true, claimed_month: "2026-11"))
        #expect(answer.status == 200)
        #expect(answer.body == expected, "\(String(decoding: answer.body, as: UTF8.self)) != \(String(decoding: expected, as: UTF8.self))")
    }
}
