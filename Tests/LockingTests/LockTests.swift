import Dispatch
import Locking
import Testing

@Suite struct LockTests {
    /// Many threads incrementing through the lock lose no update.
    @Test func updatesUnderContentionAreNotLost() {
        let counter = Lock(0)
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            for _ in 0..<10_000 { counter.withLock { $0 += 1 } }
        }
        #expect(counter.withLock { $0 } == 80_000)
    }

    /// Typed errors thrown inside the critical section come out unchanged, and the lock is released.
    @Test func throwingBodyReleasesTheLock() {
        struct Refused: Error, Equatable {}
        let lock = Lock([Int]())
        #expect(throws: Refused()) { try lock.withLock { (_: inout [Int]) throws(Refused) in throw Refused() } }
        lock.withLock { $0.append(1) }
        #expect(lock.withLock { $0 } == [1])
    }
}

#if TSAN_PROBE
/// Built only by `make sanitize` (-DTSAN_PROBE) and run on its own: a deliberate data race that
/// ThreadSanitizer must report, proving the sanitizer run can see races at all.
@Suite struct ThreadSanitizerProbe {
    final class Unguarded: @unchecked Sendable { var value = 0 }

    @Test func deliberateRaceIsReported() {
        let shared = Unguarded()
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            for _ in 0..<1_000 { shared.value += 1 }
        }
        #expect(shared.value > 0)
    }
}
#endif
