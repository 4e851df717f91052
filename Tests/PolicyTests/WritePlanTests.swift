import DeviceCheckModel
import Foundation
import Ledger
@testable import Policy
import Testing

/// An audited write as values: the intent recorded before Apple's update, the resolution of each outcome, and
/// the settlement of an intent of unknown outcome from a later query.
@Suite struct WritePlanTests {
    static let token = DeviceToken("dG9rZW4tb2YtYS1kZXZpY2U=")!
    static let at = Date(timeIntervalSince1970: 1_780_000_000)

    func plan(result: AuditResult = .ok, reason: String? = "why") -> WritePlan {
        let before = roles().meaning(of: state(1, 0, at: -1), in: now)
        return WritePlan(id: "intent-1", token: Self.token, bits: bits(1, 1), before: before, month: now, at: Self.at,
                         audit: AuditEvent(client: "admin", action: .ban, subject: nil, result: result, reason: reason))
    }

    @Test func theIntentIsPendingAndNamesTheTokenOnlyByItsDigestPrefix() {
        let intent = plan().intent
        #expect(intent.id == "intent-1")
        #expect(intent.event.result == .pending)
        #expect(intent.event.tokenPrefix == Self.token.shortDigest)
        #expect(intent.tokenPrefix == Self.token.shortDigest)
        #expect(intent.event.tokenPrefix?.contains(Self.token.base64) == false)
        #expect(intent.event.bitsBefore == "\(bits(1, 0))@\(month(-1))")
        #expect(intent.event.bitsAfter == "\(bits(1, 1))@\(now)")
        #expect(intent.event.at == Self.at)
        #expect(intent.successResult == .ok)
        #expect(intent.bits == bits(1, 1))
        #expect(intent.month == now)
        let stale = roles(stale: 1).meaning(of: state(1, 0, at: -5), in: now)
        #expect(WritePlan(id: "x", token: Self.token, bits: .clear, before: stale, month: now, at: Self.at,
                          audit: AuditEvent(client: "a", action: .ban, result: .ok)).intent.event.bitsBefore == "\(bits(1, 0))@\(month(-5)) (stale)")
        #expect(WritePlan(id: "x", token: Self.token, bits: .clear, before: roles().meaning(of: .neverSet, in: now), month: now, at: Self.at,
                          audit: AuditEvent(client: "a", action: .ban, result: .ok)).intent.event.bitsBefore == "never-set")
    }

    @Test func aWriteAppleAcceptedTakesTheResultOnSuccess() {
        #expect(plan().written(transactionID: "t1") == WriteResolution(id: "intent-1", result: .ok, bitsAfter: "\(bits(1, 1))@\(now)", reason: "why",
                                                                       transactionID: "t1"))
        #expect(plan(result: .banned).written(transactionID: "t2").result == .banned)
    }

    @Test func aWriteAppleRefusedFailedAndOneOfUnknownOutcomeStaysUnknownWithTheIntendedBits() {
        let refused = plan().failed(.rejected(status: 400, body: "bad"))
        #expect(refused.result == .failed)
        #expect(refused.bitsAfter == nil)
        #expect(refused.reason?.hasPrefix("why; Apple rejected our request") == true)
        #expect(plan().failed(.unavailable(.timedOut)).result == .failed, "a timeout before sending: not written")
        let unknown = plan().failed(.unavailable(.outcomeUnknown(.timedOut)))
        #expect(unknown.result == .unknown)
        #expect(unknown.bitsAfter == "\(bits(1, 1))@\(now)")
        let cancelled = plan(reason: nil).cancelled()
        #expect(cancelled == WriteResolution(id: "intent-1", result: .failed, bitsAfter: nil, reason: "cancelled before the update was sent",
                                             transactionID: nil))
    }

    @Test func aLaterQuerySettlesAnUnknownIntent() {
        let intent = plan(result: .banned).intent
        let shown = intent.settlement(from: state(1, 1, at: 0))
        #expect(shown.result == .banned)
        #expect(shown.bitsAfter == intent.event.bitsAfter)
        #expect(shown.reason == "why; settled by a later query of the device token: the device shows the intended bits")
        #expect(intent.settlement(from: state(1, 1, at: 1)).result == .banned, "stamped later, the same bits: written")
        #expect(intent.settlement(from: state(1, 1, at: -1)).result == .failed, "stamped before the intent's month")
        #expect(intent.settlement(from: state(1, 0, at: 0)).result == .failed)
        #expect(intent.settlement(from: .neverSet) == WriteResolution(
            id: "intent-1", result: .failed, bitsAfter: nil, reason: "why; settled by a later query of the device token: the device does not show the intended bits",
            transactionID: nil))
    }
}
