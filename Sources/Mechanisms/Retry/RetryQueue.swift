import Locking

/// Items a store failed to take, kept to be saved by a later retry: oldest first, at most `limit`, one retry at
/// a time. The ledger's two such lists (a write's audit resolution, a keyed claim's answer) are both this queue;
/// each item type says why it is kept and what saving it means.
public final class RetryQueue<Item: Sendable>: Sendable {
    private struct State: Sendable {
        var waiting: [Item] = []
        /// One retry at a time: two would save the same items twice, and drop each other's progress.
        var retrying = false
    }

    private let state = Lock(State())

    /// The most kept at once: past it (a long outage under load) `keep` refuses, and the caller falls back on
    /// what it would have done without the queue.
    public let limit: Int

    public init(limit: Int) {
        self.limit = limit
    }

    /// Keeps `item` for a retry; false, keeping nothing, when `limit` items already wait.
    public func keep(_ item: Item) -> Bool {
        state.withLock { s in
            guard s.waiting.count < limit else { return false }
            s.waiting.append(item)
            return true
        }
    }

    /// Saves the items kept so far with `save`, oldest first, stopping at the first that throws; returns at once
    /// when there are none or another retry is running.
    public func retry(_ save: (Item) async throws -> Void) async {
        let kept = state.withLock { s -> [Item] in
            guard !s.retrying, !s.waiting.isEmpty else { return [] }
            s.retrying = true
            return s.waiting
        }
        guard !kept.isEmpty else { return }
        var saved = 0
        for item in kept {
            do { try await save(item) } catch { break }
            saved += 1
        }
        // Only this retry removes, and `keep` only appends: the first `saved` are the ones saved.
        state.withLock { s in
            s.waiting.removeFirst(saved)
            s.retrying = false
        }
    }

    /// How many wait.
    public var count: Int { state.withLock { $0.waiting.count } }
}
