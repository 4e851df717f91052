import Ledger
import Locking

/// Answers of keyed claims that Apple carried out but whose answer the ledger failed to store under the
/// `Idempotency-Key`. The client got its answer (Apple had written: 503 `storage_unavailable` would say it had
/// not); the key stays this live process's, with its intent, until the answer is stored: kept here as
/// `UnsavedResolutions` keeps the write's resolution, saved before each keyed claim, every second and at
/// shutdown. Should the process die first, the key's intent makes the retry resume and find the claim in place.
final class UnsavedAnswers: Sendable {
    struct Answer: Sendable {
        let client: String
        let key: String
        let answer: RecordedAnswer
    }

    private struct State {
        var waiting: [Answer] = []
        /// One retry at a time, as in `UnsavedResolutions`.
        var retrying = false
    }

    private let state = Lock(State())

    /// The most kept at once; past it the key is given back instead (its retry resumes from the intent).
    static let limit = 10_000

    /// Keeps `answer` for a retry; false when the list is full.
    func keep(client: String, key: String, answer: RecordedAnswer) -> Bool {
        state.withLock { s in
            guard s.waiting.count < Self.limit else { return false }
            s.waiting.append(Answer(client: client, key: key, answer: answer))
            return true
        }
    }

    /// Stores the answers kept so far, oldest first, stopping at the first failure; returns at once when there
    /// are none or another retry is running.
    func retry(in ledger: any IdempotencyStore) async {
        let kept = state.withLock { s -> [Answer] in
            guard !s.retrying, !s.waiting.isEmpty else { return [] }
            s.retrying = true
            return s.waiting
        }
        guard !kept.isEmpty else { return }
        var saved = 0
        for entry in kept {
            do { try await ledger.completeIdempotent(client: entry.client, key: entry.key, status: entry.answer.status, body: entry.answer.body) } catch { break }
            saved += 1
        }
        // Only this retry removes, and `keep` only appends: the first `saved` are the ones stored.
        state.withLock { s in
            s.waiting.removeFirst(saved)
            s.retrying = false
        }
    }

    var count: Int { state.withLock { $0.waiting.count } }
}
