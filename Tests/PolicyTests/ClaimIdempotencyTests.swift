import DeviceCheckModel
import Foundation
import Policy
import Sandbox
import Ledger
import SQLiteLedger
import Testing

/// The hooks the HTTP layer's idempotency uses: `beforeWrite` records the intent before Apple's update,
/// and `resuming` recognises a claim an interrupted attempt already wrote.
@Suite("Claim idempotency hooks")
struct ClaimIdempotencyTests {
    static func roles(_ m: YearMonth) -> PolicyConfiguration {
        PolicyConfiguration(layout: .roles(bit0: .promotion, bit1: .ban), promotions: [promotion("spring", m, from: -1, to: nil)])
    }

    struct HookCall: Sendable, Equatable {
        let intent: String
        let updatesBefore: Int
    }

    @Test func beforeWriteIsCalledOnceJustBeforeTheWrite() async throws {
        try await withPolicy(Self.roles) { h in
            let d = try h.newDevice()
            let calls = Box<[HookCall]>([])
            let sandbox = h.sandbox, id = d.id
            let outcome = try await h.policy.claim("spring", token: d.token, client: "marketing", beforeWrite: { (intent: String) throws(PolicyError) in
                let updates = sandbox.device(id)?.updates ?? -1
                calls.update { $0.append(HookCall(intent: intent, updatesBefore: updates)) }
            })
            #expect(outcome.transactionID != nil)
            let recorded = calls.current
            try #require(recorded.count == 1)
            #expect(recorded[0].updatesBefore == 0, "the hook runs before Apple's update")
            #expect(try h.state(d.id).updates == 1)
            #expect(recorded[0].intent.contains("promotion.claim spring bit0"))
            #expect(recorded[0].intent.contains(String(ReferenceSHA256.hex(d.token.base64).prefix(12))))
            #expect(!recorded[0].intent.contains(d.token.base64.prefix(32)))
        }
    }

    @Test func aThrowingBeforeWriteStopsTheClaimBeforeAnythingIsWritten() async throws {
        try await withPolicy(Self.roles) { h in
            let d = try h.newDevice()
            let f = await failure {
                try await h.policy.claim("spring", token: d.token, client: "marketing", beforeWrite: { (_: String) throws(PolicyError) in
                    throw .storage(StorageError("disk full"))
                })
            }
            #expect(f == .storage("disk full"))
            #expect(try h.query(d.id) == .neverSet)
            #expect(h.calls(.update) == 0)
            await #expect(try h.audit().isEmpty)
            // The same request afterwards succeeds.
            _ = try await h.policy.claim("spring", token: d.token, client: "marketing")
            #expect(try h.query(d.id) == state(1, 0, h.month))
        }
    }

    @Test func beforeWriteIsNotCalledWhenTheClaimIsRefused() async throws {
        try await withPolicy(Self.roles) { h in
            let calls = Box(0)
            let hook: @Sendable (String) throws(PolicyError) -> Void = { _ in calls.update { $0 += 1 } }
            let claimed = try h.newDevice()
            h.sandbox.seed(claimed.id, bits: bits(1, 0), lastUpdated: h.month)
            let banned = try h.newDevice()
            h.sandbox.seed(banned.id, bits: bits(0, 1), lastUpdated: h.month)
            #expect(await failure { try await h.policy.claim("spring", token: claimed.token, client: "m", beforeWrite: hook) } == .alreadyClaimed(h.month))
            #expect(await failure { try await h.policy.claim("spring", token: banned.token, client: "m", beforeWrite: hook) } == .deviceBanned)
            #expect(await failure { try await h.policy.claim("nope", token: banned.token, client: "m", beforeWrite: hook) } == .unknownPromotion("nope"))
            #expect(calls.current == 0)
        }
    }

    @Test func resumingWithTheClaimInPlaceAnswersSuccessWithoutWriting() async throws {
        try await withPolicy(Self.roles) { h in
            let d = try h.newDevice()
            let first = try await h.policy.claim("spring", token: d.token, client: "marketing")
            #expect(first.transactionID != nil)
            let calls = Box(0)
            let resumed = try await h.policy.claim("spring", token: try h.token(d.id), client: "marketing", resuming: true,
                                                   beforeWrite: { (_: String) throws(PolicyError) in calls.update { $0 += 1 } })
            #expect(resumed == ClaimOutcomeFields(promotionID: "spring", claimedMonth: h.month, transactionID: nil))
            #expect(calls.current == 0)
            #expect(try h.state(d.id).updates == 1)
            await #expect(try h.audit().count == 1)
            // Without resuming, the same state is a refusal.
            #expect(await failure { try await h.policy.claim("spring", token: try h.token(d.id), client: "marketing") } == .alreadyClaimed(h.month))
        }
    }

    @Test func resumingWithoutTheClaimInPlaceWrites() async throws {
        try await withPolicy(Self.roles) { h in
            let d = try h.newDevice()
            // An old campaign's claim is not this request's own.
            h.sandbox.seed(d.id, bits: bits(1, 0), lastUpdated: h.month(-3))
            let calls = Box(0)
            let outcome = try await h.policy.claim("spring", token: d.token, client: "marketing", resuming: true,
                                                   beforeWrite: { (_: String) throws(PolicyError) in calls.update { $0 += 1 } })
            #expect(outcome.transactionID?.isEmpty == false)
            #expect(outcome.claimedMonth == h.month)
            #expect(calls.current == 1)
            #expect(try h.query(d.id) == state(1, 0, h.month))
            #expect(try h.state(d.id).updates == 1)
        }
    }

    @Test func resumingOnABannedDeviceIsStillRefused() async throws {
        try await withPolicy(Self.roles) { h in
            let d = try h.newDevice()
            h.sandbox.seed(d.id, bits: bits(1, 1), lastUpdated: h.month)
            #expect(await failure { try await h.policy.claim("spring", token: d.token, client: "m", resuming: true) } == .deviceBanned)
        }
    }
}

/// Compares a `ClaimOutcome` field by field (it has no public initialiser).
struct ClaimOutcomeFields: Equatable {
    let promotionID: String
    let claimedMonth: YearMonth
    let transactionID: String?

    static func == (outcome: ClaimOutcome, fields: ClaimOutcomeFields) -> Bool {
        outcome.promotionID == fields.promotionID && outcome.claimedMonth == fields.claimedMonth && outcome.transactionID == fields.transactionID
    }
}
