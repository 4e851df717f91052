import Locking

/// A counting semaphore for async callers, with a deadline on the wait.
final class InFlightLimiter: Sendable {
    private struct Waiter {
        let id: UInt64
        let continuation: CheckedContinuation<Bool, Never>
    }

    private struct State {
        var available: Int
        var waiters: [Waiter] = []
        var head = 0
        var nextID: UInt64 = 0

        /// Drops served waiters from the front once they dominate the array.
        mutating func compact() {
            if head > 1_024, head * 2 > waiters.count {
                waiters.removeFirst(head)
                head = 0
            }
        }
    }

    private let state: Lock<State>

    init(limit: Int) { state = Lock(State(available: max(1, limit))) }

    /// How many calls may be on the wire at once. Over plain http every call needs a connection of its
    /// own (no HTTP/2), so beyond `maxConnections` a call would wait inside curl for a connection, and
    /// that wait would end as a timeout of the call. Waiting here instead is counted and answered as
    /// `overloaded`. Over https curl multiplexes calls within the connections (HTTP/2), so the cap on
    /// calls in flight is the limit.
    static func slots(maxInFlight: Int, maxConnections: Int, baseURL: String) -> Int {
        baseURL.lowercased().hasPrefix("http://") ? min(maxInFlight, maxConnections) : maxInFlight
    }

    /// Takes a slot; false when none freed up within `timeoutMilliseconds`.
    func acquire(timeoutMilliseconds: Int) async -> Bool {
        let id: UInt64? = state.withLock { s in
            if s.available > 0 { s.available -= 1; return nil }
            s.nextID += 1
            return s.nextID
        }
        guard let id else { return true }
        let timer = Task {
            try await Task.sleep(for: .milliseconds(max(0, timeoutMilliseconds)))
            self.expire(id)
        }
        let granted = await withCheckedContinuation { continuation in
            let immediate: Bool = state.withLock { s in
                if s.available > 0 { s.available -= 1; return true }
                s.waiters.append(Waiter(id: id, continuation: continuation))
                return false
            }
            if immediate { continuation.resume(returning: true) }
        }
        timer.cancel()
        return granted
    }

    /// Returns a slot, handing it straight to the longest waiter if there is one.
    func release() {
        let next: Waiter? = state.withLock { s in
            if s.head < s.waiters.count {
                let w = s.waiters[s.head]
                s.head += 1
                s.compact()
                return w
            }
            s.available += 1
            return nil
        }
        next?.continuation.resume(returning: true)
    }

    private func expire(_ id: UInt64) {
        let expired: Waiter? = state.withLock { s in
            guard let index = s.waiters[s.head...].firstIndex(where: { $0.id == id }) else { return nil }
            return s.waiters.remove(at: index)
        }
        expired?.continuation.resume(returning: false)
    }
}
