import DeviceCheckModel
import Foundation
import Policy
import UseCases
import Sandbox
import Ledger
import SQLiteLedger
import Testing

/// The two steps the claim use case's idempotency takes: `prepareClaim` reads and decides, stopping one Apple
/// write away (the use case records its intent there), `writeClaim` writes; `resuming` recognises a claim an
/// interrupted attempt already wrote.
@Suite("Claim idempotency steps")
struct ClaimIdempotencyTests {
    static func roles(_ m: YearMonth) -> PolicyConfiguration {
        PolicyConfiguration(layout: .roles(bit0: .promotion, bit1: .ban), promotions: [promotion("spring", m, from: -1, to: nil)])
    }

    /// The write a prepared claim stops at; records an issue when the step is anything else.
    static func write(_ step: ClaimStep) -> ClaimWrite? {
        guard case .write(let write) = step else { Issue.record("expected a write, got \(step)"); return nil }
        return write
    }

    @Test func prepareClaimStopsJustBeforeAppleAndWriteClaimWrites() async throws {
        try await withPolicy(Self.roles) { h in
            let d = try h.newDevice()
            let write = try #require(Self.write(try await h.useCases.prepareClaim("spring", token: d.token, client: "marketing")))
            #expect(h.sandbox.device(d.id)?.updates == 0, "nothing written before writeClaim")
            await #expect(try h.audit().isEmpty)
            #expect(write.intent.contains("promotion.claim spring bit0"))
            #expect(write.intent.contains(String(ReferenceSHA256.hex(d.token.base64).prefix(12))))
            #expect(!write.intent.contains(d.token.base64.prefix(32)))
            let outcome = try await h.useCases.writeClaim(write)
            #expect(outcome.transactionID != nil)
            #expect(outcome.claimedMonth == h.month)
            #expect(try h.state(d.id).updates == 1)
        }
    }

    @Test func aPreparedClaimNotWrittenLeavesNothingWritten() async throws {
        try await withPolicy(Self.roles) { h in
            let d = try h.newDevice()
            // The use case does not go on when it cannot record its intent.
            _ = try #require(Self.write(try await h.useCases.prepareClaim("spring", token: d.token, client: "marketing")))
            #expect(try h.query(d.id) == .neverSet)
            #expect(h.calls(.update) == 0)
            await #expect(try h.audit().isEmpty)
            // The same request afterwards succeeds.
            _ = try await h.useCases.claim("spring", token: d.token, client: "marketing")
            #expect(try h.query(d.id) == state(1, 0, h.month))
        }
    }

    @Test func aRefusedClaimStopsBeforeAnyWrite() async throws {
        try await withPolicy(Self.roles) { h in
            let claimed = try h.newDevice()
            h.sandbox.seed(claimed.id, bits: bits(1, 0), lastUpdated: h.month)
            let banned = try h.newDevice()
            h.sandbox.seed(banned.id, bits: bits(0, 1), lastUpdated: h.month)
            #expect(await failure { try await h.useCases.prepareClaim("spring", token: claimed.token, client: "m") } == .alreadyClaimed(h.month))
            #expect(await failure { try await h.useCases.prepareClaim("spring", token: banned.token, client: "m") } == .deviceBanned)
            #expect(await failure { try await h.useCases.prepareClaim("nope", token: banned.token, client: "m") } == .unknownPromotion("nope"))
            #expect(h.calls(.update) == 0)
        }
    }

    @Test func resumingWithTheClaimInPlaceAnswersSuccessWithoutWriting() async throws {
        try await withPolicy(Self.roles) { h in
            let d = try h.newDevice()
            let first = try await h.useCases.claim("spring", token: d.token, client: "marketing")
            #expect(first.transactionID != nil)
            let step = try await h.useCases.prepareClaim("spring", token: try h.token(d.id), client: "marketing", resuming: true)
            guard case .inPlace(let resumed) = step else { Issue.record("expected the claim in place, got \(step)"); return }
            #expect(resumed == ClaimOutcomeFields(promotionID: "spring", claimedMonth: h.month, transactionID: nil))
            #expect(try await h.useCases.claim("spring", token: try h.token(d.id), client: "marketing", resuming: true)
                    == ClaimOutcomeFields(promotionID: "spring", claimedMonth: h.month, transactionID: nil))
            #expect(try h.state(d.id).updates == 1)
            await #expect(try h.audit().count == 1)
            // Without resuming, the same state is a refusal.
            #expect(await failure { try await h.useCases.claim("spring", token: try h.token(d.id), client: "marketing") } == .alreadyClaimed(h.month))
        }
    }

    @Test func resumingWithoutTheClaimInPlaceWrites() async throws {
        try await withPolicy(Self.roles) { h in
            let d = try h.newDevice()
            // An old campaign's claim is not this request's own.
            h.sandbox.seed(d.id, bits: bits(1, 0), lastUpdated: h.month(-3))
            let write = try #require(Self.write(try await h.useCases.prepareClaim("spring", token: d.token, client: "marketing", resuming: true)))
            let outcome = try await h.useCases.writeClaim(write)
            #expect(outcome.transactionID?.isEmpty == false)
            #expect(outcome.claimedMonth == h.month)
            #expect(try h.query(d.id) == state(1, 0, h.month))
            #expect(try h.state(d.id).updates == 1)
        }
    }

    @Test func resumingOnABannedDeviceIsStillRefused() async throws {
        try await withPolicy(Self.roles) { h in
            let d = try h.newDevice()
            h.sandbox.seed(d.id, bits: bits(1, 1), lastUpdated: h.month)
            #expect(await failure { try await h.useCases.claim("spring", token: d.token, client: "m", resuming: true) } == .deviceBanned)
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
