import Dispatch
import Locking
import FoundationEssentials
import Glibc

/// Turns SIGINT/SIGTERM into an awaited event and SIGHUP into a callback.
final class SignalWaiter: Sendable {
    /// Waits until SIGINT or SIGTERM; calls `onHangUp` for each SIGHUP meanwhile. The signal sources live as
    /// long as the wait (the signals stay ignored after it).
    func waitForTermination(onHangUp: @escaping @Sendable () -> Void = {}) async -> Int32 {
        var sources: [any DispatchSourceSignal] = []
        defer { withExtendedLifetime(sources) {} }
        for s in [SIGINT, SIGTERM, SIGHUP] { signal(s, SIG_IGN) }
        let hup = DispatchSource.makeSignalSource(signal: SIGHUP, queue: .global())
        hup.setEventHandler(handler: onHangUp)
        hup.resume()
        sources.append(hup)
        return await withCheckedContinuation { (continuation: CheckedContinuation<Int32, Never>) in
            let once = OnceFlag()
            for s in [SIGINT, SIGTERM] {
                let source = DispatchSource.makeSignalSource(signal: s, queue: .global())
                source.setEventHandler { if once.take() { continuation.resume(returning: s) } }
                source.resume()
                sources.append(source)
            }
        }
    }
}

/// True exactly once.
final class OnceFlag: Sendable {
    private let taken = Lock(false)
    func take() -> Bool {
        taken.withLock { taken in
            if taken { return false }
            taken = true
            return true
        }
    }
}
