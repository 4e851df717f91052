import Locking

/// A counting semaphore for async callers, with a deadline on the wait.
final class InFlightLimiter: Sendable {
    /// How a wait for a slot ended.
    enum Outcome: Sendable {
        case granted
        case timedOut
        case cancelled
    }

    private struct Waiter {
        let id: UInt64
        let continuation: CheckedContinuation<Outcome, Never>
    }

    private struct State {
        var available: Int
        var waiters = FIFOQueue<Waiter>()
        var nextID: UInt64 = 0
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

    /// How many callers wait for a slot (tests read it).
    var waiting: Int { state.withLock { $0.waiters.count } }

    /// Takes a slot; false when none freed up within `timeoutMilliseconds`. A caller cancelled while it
    /// waits leaves the queue at once and gets `CancellationError`: its slot would go to nobody.
    func acquire(timeoutMilliseconds: Int) async throws(CancellationError) -> Bool {
        let id: UInt64? = state.withLock { s in
            if s.available > 0 { s.available -= 1; return nil }
            s.nextID += 1
            return s.nextID
        }
        guard let id else { return true }
        let timer = Task {
            try await Task.sleep(for: .milliseconds(max(0, timeoutMilliseconds)))
            self.finish(id, .timedOut)
        }
        defer { timer.cancel() }
        let outcome = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let immediate: Outcome? = state.withLock { s in
                    if s.available > 0 { s.available -= 1; return .granted }
                    // Cancelled before it queued: the handler below found no waiter to take out.
                    if Task.isCancelled { return .cancelled }
                    s.waiters.append(Waiter(id: id, continuation: continuation))
                    return nil
                }
                if let immediate { continuation.resume(returning: immediate) }
            }
        } onCancel: {
            finish(id, .cancelled)
        }
        switch outcome {
        case .granted: return true
        case .timedOut: return false
        case .cancelled: throw CancellationError()
        }
    }

    /// Returns a slot, handing it straight to the longest waiter if there is one.
    func release() {
        let next: Waiter? = state.withLock { s in
            if let w = s.waiters.popFirst() { return w }
            s.available += 1
            return nil
        }
        next?.continuation.resume(returning: .granted)
    }

    /// Ends the wait of `id` if it still waits (its deadline passed, or its caller was cancelled).
    private func finish(_ id: UInt64, _ outcome: Outcome) {
        let ended: Waiter? = state.withLock { s in s.waiters.remove(firstWhere: { $0.id == id }) }
        ended?.continuation.resume(returning: outcome)
    }
}
