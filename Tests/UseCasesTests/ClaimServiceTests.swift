import DeviceCheckModel
import Foundation
import Ledger
import Locking
import Policy
import Testing
import TokenSigning
import SQLiteLedger
@testable import UseCases
import WireVocabulary

/// Apple as a counter: every device reads as never set, every update succeeds and is counted.
final class CountingApple: DeviceCheckAPI {
    let updates = Lock(0)
    func validate(_ token: DeviceToken) async throws(DeviceCheckError) {}
    func query(_ token: DeviceToken) async throws(DeviceCheckError) -> QueryResult { .neverSet }
    func update(_ token: DeviceToken, bits: Bits) async throws(DeviceCheckError) -> String {
        updates.withLock { $0 += 1 }
        return "t"
    }
}

/// Reports nothing.
struct SilentEvents: UseCaseEvents {
    func claim(promotion: String, _ event: ClaimEvent) {}
    func exchangeRefused(_ error: ExchangeError) {}
    func appAttestRefused(_ error: AppAttestExchangeError) {}
    func tokenIssued(tier: Tier, limitedUse: Bool) {}
    func appAttestFallback(reason: AppAttestFallbackReason) {}
    func pendingActionApplied(_ kind: PendingDeviceAction.Kind) {}
    func tokenVerified(failure: TokenVerifier.Failure?) {}
    func limitedUseTokenConsumed(first: Bool) {}
    func requestProofVerified(refusal: RequestProofRefusalReason?) {}
    func requestProofUnanswered(_ error: RequestProofError) {}
}

/// An idempotency store over a real SQLite ledger whose `recordIntent` fails while `failingIntents` is set.
final class IntentRefusingStore: IdempotencyStore, Sendable {
    let base: any IdempotencyStore
    let failingIntents = Lock(true)
    init(_ base: any IdempotencyStore) { self.base = base }

    func abandonIdempotent(client: String, key: String) async throws(StorageError) { try await base.abandonIdempotent(client: client, key: key) }
    func beginIdempotent(client: String, key: String, requestHash: String, owner: String, now: Date) async throws(StorageError) -> IdempotencyBegin {
        try await base.beginIdempotent(client: client, key: key, requestHash: requestHash, owner: owner, now: now)
    }
    func recordIntent(client: String, key: String, intent: String) async throws(StorageError) {
        if failingIntents.withLock({ $0 }) { throw StorageError("disk full: test") }
        try await base.recordIntent(client: client, key: key, intent: intent)
    }
    func completeIdempotent(client: String, key: String, status: Int, body: Data) async throws(StorageError) {
        try await base.completeIdempotent(client: client, key: key, status: status, body: body)
    }
}

/// The claim use case on its own: the key's intent before Apple's write, and one rendering per final verdict.
@Suite struct ClaimServiceTests {
    struct Setup: Sendable {
        let apple: CountingApple
        let store: IntentRefusingStore
        let claims: ClaimService
        let renders = Lock(0)
    }

    static func withClaims(_ body: (Setup) async throws -> Void) async throws {
        let directory = NSTemporaryDirectory() + "twobits-claims-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let ledger = try SQLiteLedger(path: directory + "/ledger.sqlite")
        let month = YearMonth(containing: Date())
        let configuration = PolicyConfiguration(layout: .roles(bit0: .promotion, bit1: .ban),
                                                promotions: [Promotion(id: "spring", starts: month, ends: nil, bit: 0)])
        let apple = CountingApple()
        let store = IntentRefusingStore(ledger)
        let claims = ClaimService(promotions: PromotionService(bits: DeviceBits(rules: BitRules(configuration: configuration), apple: apple, ledger: ledger)), ledger: store, events: SilentEvents())
        try await body(Setup(apple: apple, store: store, claims: claims))
    }

    static let token = DeviceToken(Data("a device token long enough for the model".utf8).base64EncodedString())!

    static func render(_ setup: Setup, _ verdict: ClaimVerdict) -> RecordedAnswer {
        setup.renders.withLock { $0 += 1 }
        switch verdict {
        case .claimed(let outcome): return RecordedAnswer(status: 200, body: Data("claimed \(outcome.claimedMonth)".utf8))
        case .refused(let error): return RecordedAnswer(status: 409, body: Data("refused \(error)".utf8))
        }
    }

    @Test func aKeyedClaimWhoseIntentCannotBeRecordedWritesNothingAtApple() async throws {
        try await Self.withClaims { s in
            let request = ClaimRequest(promotion: "spring", token: Self.token, client: "c", idempotencyKey: "k")
            do throws(ClaimError) {
                _ = try await s.claims.claim(request) { Self.render(s, $0) }
                Issue.record("the claim went on without its intent")
            } catch {
                guard case .refused(.storage) = error else { Issue.record("expected a storage refusal, got \(error)"); return }
            }
            #expect(s.apple.updates.withLock { $0 } == 0, "Apple was written although the key's intent was not recorded")
            #expect(s.renders.withLock { $0 } == 0, "a transient refusal is not rendered")

            // The key was given back: once the intent can be recorded, the retry writes.
            s.store.failingIntents.withLock { $0 = false }
            guard case .answered(.claimed, _) = try await s.claims.claim(request, render: { Self.render(s, $0) }) else {
                Issue.record("the retry did not claim"); return
            }
            #expect(s.apple.updates.withLock { $0 } == 1)
        }
    }

    @Test func aFinalVerdictIsRenderedOnceAndThatAnswerIsStoredAndReturned() async throws {
        try await Self.withClaims { s in
            s.store.failingIntents.withLock { $0 = false }
            let request = ClaimRequest(promotion: "spring", token: Self.token, client: "c", idempotencyKey: "k")
            guard case .answered(.claimed, let answer) = try await s.claims.claim(request, render: { Self.render(s, $0) }) else {
                Issue.record("not claimed"); return
            }
            #expect(s.renders.withLock { $0 } == 1)
            guard case .replayed(let replay) = try await s.claims.claim(request, render: { Self.render(s, $0) }) else {
                Issue.record("not replayed"); return
            }
            #expect(replay == answer)
            #expect(s.renders.withLock { $0 } == 1, "a replay renders nothing")

            // A final refusal without a key: rendered once too, and handed back.
            let unkeyed = ClaimRequest(promotion: "nope", token: Self.token, client: "c", idempotencyKey: nil)
            guard case .answered(.refused(.unknownPromotion), let refusal) = try await s.claims.claim(unkeyed, render: { Self.render(s, $0) }) else {
                Issue.record("not a final refusal"); return
            }
            #expect(refusal.status == 409)
            #expect(s.renders.withLock { $0 } == 2)
        }
    }

    /// The fault campaign (SQLite, seed 13, a full ledger disk): a keyed claim answered 403 `device_banned`, its
    /// answer not stored; 140 s later (the device unbanned and claimed meanwhile) the same key answered 409
    /// `already_claimed`. A final answer that cannot be stored is not given: 503 `storage_unavailable` (a final
    /// refusal wrote nothing) and the key back, so the retry runs afresh and its answer is the one stored.
    @Test func aFinalRefusalTheLedgerCannotStoreIsNotGivenAsFinal() async throws {
        let directory = NSTemporaryDirectory() + "twobits-claims-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = FailingIdempotencyStore(try SQLiteLedger(path: directory + "/ledger.sqlite"))
        store.failing.withLock { $0 = false }
        store.failingCompletes.withLock { $0 = true }
        let month = YearMonth(containing: Date())
        let configuration = PolicyConfiguration(layout: .roles(bit0: .promotion, bit1: .ban),
                                                promotions: [Promotion(id: "spring", starts: month, ends: nil, bit: 0)])
        let ledger = try SQLiteLedger(path: directory + "/policy.sqlite")
        let claims = ClaimService(promotions: PromotionService(bits: DeviceBits(rules: BitRules(configuration: configuration), apple: CountingApple(), ledger: ledger)), ledger: store,
                                  events: SilentEvents())
        let request = ClaimRequest(promotion: "nope", token: Self.token, client: "c", idempotencyKey: "k")
        let render: ClaimService.Renderer = { _ in RecordedAnswer(status: 404, body: Data("no such promotion".utf8)) }
        do throws(ClaimError) {
            let result = try await claims.claim(request, render: render)
            Issue.record("a final answer that was not stored was given: \(result)")
        } catch {
            guard case .storage = error else { Issue.record("expected storage_unavailable, got \(error)"); return }
        }
        // The key was given back: the retry runs afresh, and once stored its answer is replayed.
        store.failingCompletes.withLock { $0 = false }
        guard case .answered(.refused(.unknownPromotion), let answer) = try await claims.claim(request, render: render) else {
            Issue.record("the retry was not refused unknown_promotion"); return
        }
        guard case .replayed(let replay) = try await claims.claim(request, render: render) else { Issue.record("not replayed"); return }
        #expect(replay == answer)
    }
}
