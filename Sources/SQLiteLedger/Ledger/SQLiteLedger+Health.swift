import Dispatch
import FoundationEssentials
import EventLoops
public import Ledger
import Locking
import Mechanisms

extension SQLiteLedger {
    /// Proves the ledger takes a write: a one-row transaction on the ledger thread at most every
    /// `healthProbeInterval` (the verdict is cached in between), and at every call that the open file is
    /// still the file at its path. Never waits for a stalled disk longer than `probeTimeout`: a probe not
    /// answered by then fails (it still runs when the disk is back, and its verdict then counts), and while
    /// the ledger thread is stalled the check fails at once.
    public func checkHealth() async throws(StorageError) {
        do { try db.verifyFileIdentity() } catch { throw StorageError(error) }
        if let stalled = thread.stalled { throw StorageError(stalled) }
        if try lastProbe.recent() { return }
        let started = ContinuousClock.now
        let lastProbe = lastProbe
        let db = db
        let timeout = probeTimeout
        let failure: StorageError? = await withCheckedContinuation { continuation in
            let once = ResumeOnce(continuation)
            let refusal = thread.submit {
                var failure: StorageError?
                do throws(SQLiteError) {
                    _ = try db.transaction { tx throws(SQLiteError) in
                        try tx.query("INSERT INTO health_probe (id, at_ms) VALUES (1, ?) ON CONFLICT(id) DO UPDATE SET at_ms = excluded.at_ms",
                                     [.integer(Int64((Date().timeIntervalSince1970 * 1000).rounded()))])
                    }
                } catch { failure = StorageError(error) }
                // A probe that answers after its wait gave up: its verdict is the newest.
                if !once.resume(failure) { try? lastProbe.remember(failure, at: ContinuousClock.now) }
            }
            if let refusal {
                once.resume(StorageError(refusal))
                return
            }
            let late = StorageError("the ledger did not answer the readiness probe within \(timeout) (its disk may be stalled)")
            if let loop = EventLoop.current {
                _ = loop.schedule(in: timeout) { once.resume(late) }
            } else {
                DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(timeout.wholeNanoseconds)) { once.resume(late) }
            }
        }
        try lastProbe.remember(failure, at: started)
    }
}

/// A continuation resumed by whichever comes first: the probe's outcome or its timeout.
private final class ResumeOnce: Sendable {
    private let continuation: Lock<CheckedContinuation<StorageError?, Never>?>

    init(_ continuation: CheckedContinuation<StorageError?, Never>) { self.continuation = Lock(continuation) }

    /// False when it was resumed already.
    @discardableResult
    func resume(_ outcome: StorageError?) -> Bool {
        guard let taken = continuation.withLock({ c -> CheckedContinuation<StorageError?, Never>? in
            defer { c = nil }
            return c
        }) else { return false }
        taken.resume(returning: outcome)
        return true
    }
}
