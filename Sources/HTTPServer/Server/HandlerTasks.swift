import EventLoops
import Locking

/// Counts the handler tasks the server owns, and wakes whoever waits for them all to end (shutdown).
final class HandlerTasks: Sendable {
    private struct State {
        var running = 0
        var waiters: [UInt64: CheckedContinuation<Bool, Never>] = [:]
        var nextID: UInt64 = 0
    }

    private let state = Lock<State>(State())

    var count: Int { state.withLock { $0.running } }

    func started() { state.withLock { $0.running += 1 } }

    func ended() {
        let idle = state.withLock { s -> [CheckedContinuation<Bool, Never>] in
            s.running -= 1
            guard s.running == 0, !s.waiters.isEmpty else { return [] }
            defer { s.waiters.removeAll() }
            return Array(s.waiters.values)
        }
        for waiter in idle { waiter.resume(returning: true) }
    }

    /// True once no handler runs; false when `timeout` passed first (timed on `timerLoop`, no polling).
    func waitUntilIdle(timeout: Duration, timerLoop: EventLoop) async -> Bool {
        await withCheckedContinuation { continuation in
            let id = state.withLock { s -> UInt64? in
                guard s.running > 0 else { return nil }
                s.nextID += 1
                s.waiters[s.nextID] = continuation
                return s.nextID
            }
            guard let id else { return continuation.resume(returning: true) }
            timerLoop.execute {
                timerLoop.schedule(in: timeout) { self.timeOut(id) }
            }
        }
    }

    private func timeOut(_ id: UInt64) {
        state.withLock { $0.waiters.removeValue(forKey: id) }?.resume(returning: false)
    }
}
