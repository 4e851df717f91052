import Ledger
import Locking

/// Idempotency keys this process failed to give back (the ledger was down when the attempt ended). Until
/// given back they stay owned by this live process, so every retry, on any replica, would answer 409
/// `request_in_progress` for the key's 24 hours; they are given back at the next claim this process serves.
final class AbandonedKeys: Sendable {
    struct Key: Hashable, Sendable {
        let client: String
        let key: String
    }

    private let keys = Lock<Set<Key>>([])

    /// Gives `key` back now, or remembers it for later when the ledger fails again.
    func giveBack(client: String, key: String, in ledger: any IdempotencyStore) async {
        do { try await ledger.abandonIdempotent(client: client, key: key) } catch {
            keys.withLock { _ = $0.insert(Key(client: client, key: key)) }
        }
    }

    /// Retries the keys remembered so far (a lock check only, when there are none).
    func retry(in ledger: any IdempotencyStore) async {
        let pending = keys.withLock { $0 }
        guard !pending.isEmpty else { return }
        for entry in pending {
            guard (try? await ledger.abandonIdempotent(client: entry.client, key: entry.key)) != nil else { return }
            keys.withLock { _ = $0.remove(entry) }
        }
    }

    var count: Int { keys.withLock { $0.count } }
}
