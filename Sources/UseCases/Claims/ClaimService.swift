import DeviceCheckModel
import FoundationEssentials
public import Ledger
import Mechanisms
import Policy
import TwoBitsCrypto
import Glibc
import WireFormats

/// Claims a promotion for a device, with the `Idempotency-Key` protocol (docs/architecture.md, "Idempotency
/// intent recorded before the write"): reserve the key, replay a finished answer, refuse a conflict or a
/// running twin, resume after a crash, record the intent before Apple's write, store the final answer,
/// give the key back after a transient failure.
public struct ClaimService: Sendable {
    /// Renders a final verdict as the answer the client gets. The service calls it once per final verdict,
    /// stores what it returns under the key and hands the same value back to be sent, so a replay is the
    /// original byte for byte.
    public typealias Renderer = @Sendable (ClaimVerdict) -> RecordedAnswer

    let promotions: PromotionService
    let ledger: any IdempotencyStore
    let events: any UseCaseEvents
    /// Keys whose give-back failed, retried before each claim with a key.
    let abandoned = AbandonedKeys()
    /// Answers Apple's write made final that the ledger failed to store, retried before each claim with a key,
    /// every second and at shutdown (`retryUnsavedAnswers`).
    let unsavedAnswers = RetryQueue<UnsavedAnswer>(limit: UnsavedAnswer.limit)

    public init(promotions: PromotionService, ledger: any IdempotencyStore, events: any UseCaseEvents) {
        self.promotions = promotions
        self.ledger = ledger
        self.events = events
    }

    /// This process, as the owner of the idempotency keys it is working on.
    public static let instance = "pid\(getpid())-" + SecureRandom.bytes(8).hexString

    public func claim(_ request: ClaimRequest, render: Renderer) async throws(ClaimError) -> ClaimResult {
        let id = request.promotion, client = request.client, token = request.token
        let idempotencyKey = request.idempotencyKey

        var resuming = false
        if let key = idempotencyKey {
            let fingerprint = SHA256Digest.hex("claim|\(id)|\(token.base64)")
            await abandoned.retry(in: ledger)
            await retryUnsavedAnswers()
            let begin: IdempotencyBegin
            do {
                begin = try await ledger.beginIdempotent(client: client, key: key, requestHash: fingerprint, owner: Self.instance, now: Date())
            } catch { throw .storage(error) }
            switch begin {
            case .replay(let status, let stored):
                events.claim(promotion: id, .replayed)
                return .replayed(RecordedAnswer(status: status, body: stored))
            case .conflict:
                throw .idempotencyKeyConflict
            case .inProgress:
                events.claim(promotion: id, .inProgress)
                throw .inProgress
            case .unfinished(let intent):
                resuming = intent != nil
            case .started:
                break
            }
        }

        let outcome: ClaimOutcome
        do throws(PolicyError) {
            switch try await promotions.prepareClaim(id, token: token, client: client, resuming: resuming) {
            case .inPlace(let found):
                outcome = found
            case .write(let write):
                // The key's intent, before Apple's update: unrecorded, nothing is written.
                if let key = idempotencyKey {
                    do throws(StorageError) { try await ledger.recordIntent(client: client, key: key, intent: write.intent) } catch { throw .storage(error) }
                }
                outcome = try await promotions.writeClaim(write)
            }
        } catch {
            events.claim(promotion: id, .refused(error))
            // Final answers are replayed; transient ones leave the key open for the retry.
            guard error.isFinal else {
                if let key = idempotencyKey { await abandoned.giveBack(client: client, key: key, in: ledger) }
                throw .refused(error)
            }
            let answer = render(.refused(error))
            if let key = idempotencyKey {
                do throws(StorageError) { try await ledger.completeIdempotent(client: client, key: key, status: answer.status, body: answer.body) } catch {
                    // Not stored, so not final: every repeat of a key must get the answer it got, and a repeat would run the
                    // claim again on a device that may have changed since. A final refusal wrote nothing, so 503
                    // `storage_unavailable` is true; the key is given back and the retry runs the claim afresh.
                    await abandoned.giveBack(client: client, key: key, in: ledger)
                    throw .storage(error)
                }
            }
            return .answered(.refused(error), answer)
        }
        events.claim(promotion: id, outcome.transactionID == nil ? .claimedOnRetry : .claimed)
        let answer = render(.claimed(outcome))
        if let key = idempotencyKey {
            do { try await ledger.completeIdempotent(client: client, key: key, status: answer.status, body: answer.body) } catch {
                // Apple has written: the answer is the claim, never 503 `storage_unavailable` (which says nothing
                // was written). The answer is kept and stored once the ledger takes it, so the retry replays it;
                // when none can be kept, the key is given back (its intent stays) and the retry resumes.
                if !unsavedAnswers.keep(UnsavedAnswer(client: client, key: key, answer: answer)) {
                    await abandoned.giveBack(client: client, key: key, in: ledger)
                }
            }
        }
        return .answered(.claimed(outcome), answer)
    }

    /// Stores the answers the ledger failed to take (a lock check only, when there are none). The service calls
    /// this every second and at shutdown, so the key's retry, on any replica, finds the answer soon after the
    /// ledger is back.
    public func retryUnsavedAnswers() async {
        await unsavedAnswers.retry { [ledger] in try await $0.store(in: ledger) }
    }

    /// How many answers wait for the ledger.
    public var unsavedAnswerCount: Int { unsavedAnswers.count }
}
